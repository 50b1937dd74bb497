import type { NodeData } from '../contract/coordinator.js';
import { decodeJson } from '../contract/paths.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import type { EntryData } from '../engine/types.js';

/** A pending entry as read: its data and stat, or why there is none to claim. */
export type EntryRead =
  | { version: number; czxid: number; data: EntryData }
  /** The entry is gone (claimed and settled, or removed) since it was listed. */
  | 'gone'
  /** A node named like an entry whose data is not a zoott entry (logged). */
  | 'bad';

/** Reads the pending entry at `path` and checks that it holds what a claim reads. */
export async function readEntryNode(ctx: EngineContext, path: string): Promise<EntryRead> {
  let node: NodeData;
  try {
    node = await ctx.coordinator.get(path);
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return 'gone';
    throw err;
  }
  try {
    const data = decodeJson<EntryData>(node.data, path);
    const problem = entryProblem(data);
    if (problem) throw new Error(problem);
    return { version: node.stat.version, czxid: node.stat.czxid, data };
  } catch (err) {
    ctx.logger.warn(
      { path, reason: (err as Error).message },
      'skipping a pending node that is not a zoott entry',
    );
    return 'bad';
  }
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
