import { ancestorsOf, type TaskKey } from './keys.js';

/** Where a task is in its life. `undefined` from a lookup means "not queued / unknown". */
export type TaskState = 'pending' | 'working' | 'completed' | 'failed';

/** States of an ancestor that keep its descendants waiting. */
export const BLOCKING_STATES: ReadonlySet<TaskState> = new Set(['pending', 'working', 'failed']);

/**
 * The first ancestor of `key`, searching from the ROOT down, whose state is pending,
 * working or failed; `null` when none is. The root-most blocker is reported because it
 * is the one that has to finish first. A completed or unknown ancestor does not block.
 */
export function blockingAncestor(
  key: TaskKey,
  stateOf: (key: TaskKey) => TaskState | undefined,
): TaskKey | null {
  for (const ancestor of ancestorsOf(key)) {
    const state = stateOf(ancestor);
    if (state !== undefined && BLOCKING_STATES.has(state)) return ancestor;
  }
  return null;
}

/**
 * Whether no ancestor of `key` blocks it. This is the tree rule only: the caller still
 * checks the task's own state (it must be pending and unclaimed) and its type.
 */
export function isRunnable(
  key: TaskKey,
  stateOf: (key: TaskKey) => TaskState | undefined,
): boolean {
  return blockingAncestor(key, stateOf) === null;
}
