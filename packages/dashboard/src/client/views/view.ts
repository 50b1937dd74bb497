import type { EngineEvent, TaskKey } from '../api.js';
import { encodeKey } from '../task-states.js';

/** What a page gets from the app shell. */
export interface ViewContext {
  world: string;
  readOnly: boolean;
  /** Shows a short message in the status bar. */
  notify(message: string, kind?: 'info' | 'error'): void;
}

/** One page of the app. */
export interface View {
  el: HTMLElement;
  /** Re-reads everything the page shows (first load, resync after a drop). */
  refresh(): Promise<void>;
  onTask?(event: EngineEvent): void;
  onWorkers?(): void;
  dispose?(): void;
}

export { STATES } from '../task-states.js';

export function href(world: string, page: string, key?: TaskKey): string {
  const encoded = encodeURIComponent(world);
  return key ? `#/${encoded}/task/${encodeURIComponent(encodeKey(key))}` : `#/${encoded}/${page}`;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs an operator action on one task (retry, cancel), tells the outcome in the status bar
 * and re-reads the page either way, so the page never shows a state the action changed.
 */
export async function taskAction(
  ctx: ViewContext,
  what: string,
  key: TaskKey,
  run: () => Promise<unknown>,
  refresh: () => Promise<void>,
): Promise<void> {
  try {
    await run();
    ctx.notify(`${what}: ${encodeKey(key)}`);
  } catch (err) {
    ctx.notify(`${what} failed: ${errorText(err)}`, 'error');
  }
  await refresh();
}
