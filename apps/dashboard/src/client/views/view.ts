import type { EngineEvent, TaskKey } from '../api.js';
import { encodeKey } from '../api.js';

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
  onTask?(e: EngineEvent): void;
  onWorkers?(): void;
  dispose?(): void;
}

export const STATES = ['pending', 'working', 'completed', 'failed'] as const;

export function href(world: string, page: string, key?: TaskKey): string {
  const w = encodeURIComponent(world);
  return key ? `#/${w}/task/${encodeURIComponent(encodeKey(key))}` : `#/${w}/${page}`;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
