import { readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { type Coordinator, createEngine, type TaskKey, type TaskRecord } from '@zoott/core';
import { freshChroot } from '@zoott/testing';

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
      const v = await probe();
      if (v !== undefined) return v;
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
  c: Coordinator,
  world: string,
  key: TaskKey,
  ms = 60_000,
): Promise<TaskRecord> {
  const engine = createEngine(c, { world });
  return until(
    `task ${key.join('|')} to settle`,
    async () => {
      const t = await engine.task(key);
      return t && (t.state === 'completed' || t.state === 'failed') ? t : undefined;
    },
    ms,
  );
}

/** Pids of running processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmd.includes(marker)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Kills leftover processes carrying `marker` (test cleanup only). */
export function killMarked(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
