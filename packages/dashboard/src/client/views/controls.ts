import { api, type Overview } from '../api.js';
import { element } from '../dom.js';
import { errorText, type ViewContext } from './view.js';

/** What is paused in a world, for the overview. */
export function pausedText(paused: Overview['paused']): string {
  if (paused.world) return 'paused (every type)';
  return paused.types.length > 0 ? `paused types: ${paused.types.join(', ')}` : 'running';
}

/**
 * Pause or resume the whole world (workers finish what runs, then claim nothing until
 * resumed); none on a read-only dashboard. Re-reads the page after either outcome.
 */
export function pauseButton(
  ctx: ViewContext,
  overview: Overview,
  refresh: () => Promise<void>,
): HTMLElement | null {
  if (ctx.readOnly) return null;
  const pausing = !overview.paused.world;
  const run = async () => {
    try {
      await (pausing ? api.pause(overview.world) : api.resume(overview.world));
      ctx.notify(`${overview.world} ${pausing ? 'paused' : 'resumed'}`);
    } catch (err) {
      ctx.notify(`${pausing ? 'pause' : 'resume'} failed: ${errorText(err)}`, 'error');
    }
    await refresh();
  };
  return element(
    'button',
    { type: 'button', 'data-action': pausing ? 'pause' : 'resume', onclick: () => void run() },
    pausing ? 'Pause' : 'Resume',
  );
}

/** How long a first click of a confirm button waits for the second. */
const CONFIRM_MS = 3000;

/**
 * First clicks waiting for their second, by `scope` and action, with when they lapse. Kept
 * outside the button: a live update re-renders the page (a new button) between the clicks,
 * and the second click must still count as the second.
 */
const confirming = new Map<string, number>();

/**
 * A button that acts on its second click (within 3 s; then it asks again): for what cannot
 * be undone, such as a cancel. `scope` names what it acts on (a task's key), so a re-rendered
 * button for the same thing keeps the first click.
 */
export function confirmButton(
  action: string,
  label: string,
  confirmLabel: string,
  run: () => Promise<void>,
  scope = '',
): HTMLElement {
  const id = `${scope}\u0000${action}`;
  const armed = () => (confirming.get(id) ?? 0) > Date.now();
  const button = element(
    'button',
    { type: 'button', class: 'danger', 'data-action': action },
    armed() ? confirmLabel : label,
  );
  const lapse = (ms: number) =>
    setTimeout(() => {
      if (!armed()) button.textContent = label;
    }, ms);
  if (armed()) lapse((confirming.get(id) ?? 0) - Date.now());
  button.addEventListener('click', () => {
    if (!armed()) {
      confirming.set(id, Date.now() + CONFIRM_MS);
      button.textContent = confirmLabel;
      lapse(CONFIRM_MS);
      return;
    }
    confirming.delete(id);
    void run();
  });
  return button;
}
