// Waiting on a worker's effects in tests: a task settled, a condition met, with a deadline.
import { userInfo } from 'node:os';
import { type Coordinator, createEngine, type TaskKey, type TaskRecord } from '@zoott/core';
import { freshChroot } from './fresh-chroot.js';

/**
 * The test's own user: jobs of test workers run as it (`runAs`), which a root worker must be
 * told explicitly, and which needs no user switch whoever runs the tests.
 */
export const SELF = userInfo().username;

/** A fresh chroot on the shared test server; returns its connect string. */
export async function freshNamespace(server: string): Promise<string> {
  return (await freshChroot(server, 'w')).connectString;
}

/** Polls `probe` until it returns a value other than undefined, or fails after `ms`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  ms = 60_000,
): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
  );
}

/** Waits until a task is completed or failed and returns its record. */
export function settled(
  coordinator: Coordinator,
  world: string,
  key: TaskKey,
  ms = 60_000,
): Promise<TaskRecord> {
  const engine = createEngine(coordinator, { world });
  return until(
    `task ${key.join('|')} to settle`,
    async () => {
      const task = await engine.task(key);
      return task && (task.state === 'completed' || task.state === 'failed') ? task : undefined;
    },
    ms,
  );
}
