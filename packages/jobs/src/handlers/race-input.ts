import { realpath } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { SettleListener } from '@zoott/core';
import { RACE_TYPE } from '../constants.js';
import { KeptError, openDirIn, openRoot, removeDirIn } from './remove-below.js';

/** What became of a race's input directory once the race was over. */
export type InputRemoval = { removed: string } | { kept: string; reason: string };

/**
 * Removes a race's input directory, as the spec says the framework does when the race is
 * over. Only strictly inside the data directory: `dir` is relative, holds no `..`, and is
 * walked down from the data directory one directory at a time without following a link (a
 * link on the way, or the input itself a link, keeps it). The tree is then removed through
 * the directories held open (remove-below.ts), so a link swapped in by anyone who may write
 * in the input while it is removed is removed itself, never followed. Never throws; says what
 * it did.
 */
export async function removeRaceInputDir(dataDir: string, dir: string): Promise<InputRemoval> {
  if (isAbsolute(dir)) return { kept: dir, reason: 'not a relative path' };
  const parts = dir.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..'))
    return { kept: dir, reason: 'not inside the data directory' };
  const held = [];
  try {
    const root = await realpath(resolve(dataDir));
    let at = await openRoot(root);
    held.push(at);
    for (const [index, name] of parts.entries()) {
      const next = await openDirIn(at, name);
      if (!next)
        return {
          kept: dir,
          reason:
            index === parts.length - 1
              ? 'not a directory (a link is kept)'
              : `${parts.slice(0, index + 1).join('/')} is not a directory (a link on the way is not followed)`,
        };
      held.push(next);
      if (index === parts.length - 1) {
        if ((await next.stat()).dev !== (await at.stat()).dev)
          return { kept: dir, reason: 'on another file system than its parent (a mount point)' };
        await removeDirIn(at, name, next);
        return { removed: resolve(root, ...parts) };
      }
      at = next;
    }
    return { kept: dir, reason: 'not inside the data directory' };
  } catch (err) {
    const why = err instanceof KeptError ? err.message : String((err as Error).message ?? err);
    return { kept: dir, reason: why };
  } finally {
    for (const handle of held) await handle.close().catch(() => undefined);
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
    void removeRaceInputDir(dataDir(), input).then((removal) =>
      'removed' in removal
        ? log.info({ race: claim.name, dir: removal.removed }, 'race input directory removed')
        : log.warn(
            { race: claim.name, dir: removal.kept, reason: removal.reason },
            'race input directory kept',
          ),
    );
  };
}
