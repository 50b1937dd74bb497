import type { NodeData } from '../contract/coordinator.js';
import { decodeJson } from '../contract/paths.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import type { EntryData } from '../engine/types.js';

/**
 * A pending entry as read: its data and stat. `firstSeen` is set when it is cached (see
 * `BucketState.entryRead`): the read is the cached entry itself, not copied into one.
 */
export interface ReadEntry {
  version: number;
  czxid: number;
  data: EntryData;
  firstSeen: number;
}

/** A pending entry as read, or why there is none to claim. */
export type EntryRead =
  | ReadEntry
  /** The entry is gone (claimed and settled, or removed) since it was listed. */
  | 'gone'
  /** A node named like an entry whose data is not a zoott entry (logged). */
  | 'bad';

/**
 * What the read `node` of the pending entry at `path` holds for a claim. The caller awaits
 * the read itself (one async layer per entry read, not two); a failed read is `readFailed`'s.
 */
export function entryOfNode(ctx: EngineContext, path: string, node: NodeData): EntryRead {
  try {
    const data = decodeJson<EntryData>(node.data, path);
    const problem = entryProblem(data);
    if (problem) throw new Error(problem);
    return { version: node.stat.version, czxid: node.stat.czxid, data, firstSeen: 0 };
  } catch (err) {
    ctx.logger.warn(
      { path, reason: (err as Error).message },
      'skipping a pending node that is not a zoott entry',
    );
    return 'bad';
  }
}

/** A failed read of an entry: `'gone'` when there is none any more, else the error, thrown. */
export function readFailed(err: unknown): 'gone' {
  if (codeOf(err) === 'NO_NODE') return 'gone';
  throw err;
}

/** Why decoded entry data cannot be claimed, or `null` when it has what a claim reads. */
function entryProblem(data: unknown): string | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return 'data is not a JSON object';
  const entry = data as Partial<EntryData>;
  if (typeof entry.name !== 'string' || typeof entry.type !== 'string')
    return 'name and type must be strings';
  if (!Number.isInteger(entry.attempts) || !Number.isInteger(entry.maxAttempts))
    return 'attempts and maxAttempts must be integers';
  return null;
}
