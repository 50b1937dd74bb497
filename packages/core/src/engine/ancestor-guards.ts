import type { Op } from '../contract/coordinator.js';
import type { TaskKey } from '../tree/keys.js';
import type { EngineContext } from './context.js';

/**
 * The guards a child's claim carries when its listing has not seen every change of its
 * bucket. Such a listing may lack the new entry of an ancestor queued again after it was
 * read (every re-queue `set`s the task's tree node in the multi that creates its entry, in
 * the same bucket). Each ancestor's tree node is read: one changed after the listing's
 * `pzxid` (the last child change the listing shows) may have been queued again unseen, and
 * the child is not claimed from this listing (`null`). Otherwise the claim multi checks each
 * ancestor's tree node at the version read, so a re-queue that lands before the claim makes
 * the claim fail instead of running the child early.
 */
export async function ancestorGuards(
  ctx: EngineContext,
  key: TaskKey,
  pzxid: number,
): Promise<Op[] | null> {
  const paths = key.slice(0, -1).map((_, i) => ctx.layout.treePath(key.slice(0, i + 1)));
  const stats = await Promise.all(paths.map((p) => ctx.coordinator.exists(p)));
  const ops: Op[] = [];
  for (const [i, stat] of stats.entries()) {
    if (stat === null || stat.mzxid > pzxid) return null;
    ops.push({ op: 'check', path: paths[i]!, version: stat.version });
  }
  return ops;
}
