import { lstat, realpath, rm } from 'node:fs/promises';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import type { SettleListener } from '@zoott/core';
import { RACE_TYPE } from '../constants.js';

/** What became of a race's input directory once the race was over. */
export type InputRemoval = { removed: string } | { kept: string; reason: string };

const under = (root: string, path: string) =>
  path !== root && path.startsWith(root === sep ? root : root + sep);

/**
 * Removes a race's input directory, as the spec says the framework does when the race is
 * over. Only strictly inside the data directory, judged on real paths: `dir` must be
 * relative, its parent's real path must lie under the data directory's real path (or be
 * it), and `dir` itself must be a directory, not a link (a link is kept: what it points to
 * is not the race's to delete). Never throws; says what it did.
 */
export async function removeRaceInputDir(dataDir: string, dir: string): Promise<InputRemoval> {
  if (isAbsolute(dir)) return { kept: dir, reason: 'not a relative path' };
  try {
    const root = await realpath(resolve(dataDir));
    const lexical = resolve(root, dir);
    const parent = await realpath(dirname(lexical));
    const target = resolve(parent, lexical.slice(dirname(lexical).length + 1));
    if (!under(root, target) || !(parent === root || under(root, parent)))
      return { kept: dir, reason: 'not inside the data directory' };
    const stat = await lstat(target);
    if (!stat.isDirectory()) return { kept: target, reason: 'not a directory (a link is kept)' };
    await rm(target, { recursive: true, force: true });
    return { removed: target };
  } catch (err) {
    return { kept: dir, reason: String((err as Error).message ?? err) };
  }
}

/** Where {@link withRaceInputCleanup} reports what it did. */
interface CleanupLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * The race world's settle listener, plus: once a race with a directory input is completed
 * (its result recorded in ZooKeeper, so no retry will need the input again), its input
 * directory is removed. A race that failed keeps its input, for an operator retry.
 */
export function withRaceInputCleanup(
  listener: SettleListener,
  dataDir: () => string,
  log: CleanupLog,
): SettleListener {
  return (claim, outcome, detail) => {
    void listener(claim, outcome, detail);
    if (claim.type !== RACE_TYPE || outcome.status !== 'completed') return;
    const input = (claim.data as { input?: unknown } | null)?.input;
    if (typeof input !== 'string') return;
    void removeRaceInputDir(dataDir(), input).then((r) =>
      'removed' in r
        ? log.info({ race: claim.name, dir: r.removed }, 'race input directory removed')
        : log.warn(
            { race: claim.name, dir: r.kept, reason: r.reason },
            'race input directory kept',
          ),
    );
  };
}
