import type { Op } from '../contract/coordinator.js';
import type { EngineContext } from '../engine/context.js';
import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';

/**
 * The guards every child's claim carries. Its listing may lack the new entry of an ancestor
 * queued again after it was read (every re-queue `set`s the task's tree node in the multi that
 * creates its entry, in the same bucket), and no count of change events can tell: the
 * re-queue's event may still be on its way when the claim goes out, however up to date the
 * listing looks. Each ancestor's tree node is read: one changed after the listing's
 * `pzxid` (the last child change the listing shows) may have been queued again unseen, and
 * the child is not claimed from this listing (`null`). Otherwise the claim multi checks each
 * ancestor's tree node at the version read, so a re-queue that lands before the claim makes
 * the claim fail instead of running the child early.
 */
export async function ancestorGuards(
  ctx: EngineContext,
  key: TaskKey,
  pzxid: number,
  /**
   * Tree-node stats read for earlier children, by the ancestor's encoded key. A stat kept
   * here may be out of date: the claim's check decides (a refused one clears the cache), and
   * a stat older than the listing only makes `mzxid <= pzxid` easier to meet for a version
   * the check then holds to.
   */
  seen: GuardStats,
): Promise<Op[] | null> {
  const ancestors = key.slice(0, -1).map((_, i) => key.slice(0, i + 1));
  const paths = ancestors.map((ancestor) => ctx.layout.treePath(ancestor));
  const stats = await Promise.all(
    ancestors.map(async (ancestor, index) => {
      const id = ancestor.join(KEY_SEPARATOR);
      const known = seen.guardStat(id);
      if (known) return known;
      const stat = await ctx.coordinator.exists(paths[index]!);
      if (stat) seen.rememberGuard(id, { version: stat.version, mzxid: stat.mzxid });
      return stat;
    }),
  );
  return guardOps(paths, stats, pzxid);
}

/**
 * The same guards when every ancestor's stat is in `seen` already (read ahead while the
 * parent ran, say): no request, so a just-unblocked child is claimed at once. `undefined`
 * when some stat must be read first.
 */
export function knownGuards(
  ctx: EngineContext,
  key: TaskKey,
  pzxid: number,
  seen: Pick<GuardStats, 'guardStat'>,
): Op[] | null | undefined {
  const stats: AncestorStat[] = [];
  const paths: string[] = [];
  for (let i = 1; i < key.length; i++) {
    const ancestor = key.slice(0, i);
    const stat = seen.guardStat(ancestor.join(KEY_SEPARATOR));
    if (stat === undefined) return undefined;
    stats.push(stat);
    paths.push(ctx.layout.treePath(ancestor));
  }
  return guardOps(paths, stats, pzxid);
}

function guardOps(
  paths: readonly string[],
  stats: readonly (AncestorStat | null)[],
  pzxid: number,
): Op[] | null {
  const ops: Op[] = [];
  for (const [index, stat] of stats.entries()) {
    if (stat === null || stat.mzxid > pzxid) return null;
    ops.push({ op: 'check', path: paths[index]!, version: stat.version });
  }
  return ops;
}

/** What a guard needs of an ancestor's tree node. */
export interface AncestorStat {
  version: number;
  mzxid: number;
}

/** Where a bucket keeps the ancestors' stats read for its children's guards. */
export interface GuardStats {
  guardStat(id: string): AncestorStat | undefined;
  rememberGuard(id: string, stat: AncestorStat): void;
}
