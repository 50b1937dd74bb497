import { api, type Overview } from '../api.js';
import { h } from '../dom.js';
import { errorText, type ViewContext } from './view.js';

/** What is paused in a world, for the overview. */
export function pausedText(p: Overview['paused']): string {
  if (p.world) return 'paused (every type)';
  return p.types.length > 0 ? `paused types: ${p.types.join(', ')}` : 'running';
}

/**
 * Pause or resume the whole world (workers finish what runs, then claim nothing until
 * resumed); none on a read-only dashboard. Re-reads the page after either outcome.
 */
export function pauseButton(
  ctx: ViewContext,
  o: Overview,
  refresh: () => Promise<void>,
): HTMLElement | null {
  if (ctx.readOnly) return null;
  const pausing = !o.paused.world;
  const run = async () => {
    try {
      await (pausing ? api.pause(o.world) : api.resume(o.world));
      ctx.notify(`${o.world} ${pausing ? 'paused' : 'resumed'}`);
    } catch (err) {
      ctx.notify(`${pausing ? 'pause' : 'resume'} failed: ${errorText(err)}`, 'error');
    }
    await refresh();
  };
  return h(
    'button',
    { type: 'button', 'data-action': pausing ? 'pause' : 'resume', onclick: () => void run() },
    pausing ? 'Pause' : 'Resume',
  );
}

/**
 * A button that acts on its second click (within 3 s; then it asks again): for what cannot
 * be undone, such as a cancel.
 */
export function confirmButton(
  action: string,
  label: string,
  confirmLabel: string,
  run: () => Promise<void>,
): HTMLElement {
  let confirming = false;
  const button = h('button', { type: 'button', class: 'danger', 'data-action': action }, label);
  button.addEventListener('click', () => {
    if (!confirming) {
      confirming = true;
      button.textContent = confirmLabel;
      setTimeout(() => {
        confirming = false;
        button.textContent = label;
      }, 3000);
      return;
    }
    void run();
  });
  return button;
}
