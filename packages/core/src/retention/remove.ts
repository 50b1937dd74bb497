import type { Op, Stat } from '../contract/coordinator.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import { AREA } from '../engine/layout.js';
import { findEntry } from '../engine/task-ops.js';
import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';
import type { Indexed } from './dir-index.js';

/** What one round of removal did. */
export interface RemoveReport {
  /** Records removed. */
  records: number;
  /** Tree nodes removed (leaves with their record, and bare ancestors left without children). */
  treeNodes: number;
  /** Records left in place: changed since they were indexed (re-queued, cancelled, recreated). */
  skipped: number;
}

export const emptyRemoveReport = (): RemoveReport => ({ records: 0, treeNodes: 0, skipped: 0 });

/** Records per multi: about 200 ops, far below ZooKeeper's request size limit. */
export const REMOVE_BATCH = 100;

interface Planned {
  victim: Indexed;
  key: TaskKey;
  ops: Op[];
  leaf: boolean;
}

/**
 * The ops that remove one completed record, guarded by the task's tree node: its version
 * must be the one read now, and its last data change (`mzxid`) must be older than the record
 * the index saw (`victim.zxid`). Every re-queue rewrites the tree node first, so a task
 * queued again after the record was indexed (whose record may be a new one by now) is never
 * touched, and one re-queued while the multi is on its way makes it fail. A leaf's tree
 * node goes with its record: the completed subtree leaves the task tree.
 */
function plan(
  ctx: EngineContext,
  victim: Indexed,
  tree: Stat | null,
  record: Stat | null,
): Planned | null {
  const key = victim.name.split(KEY_SEPARATOR);
  const recordPath = `${victim.dir}/${victim.name}`;
  const treePath = ctx.layout.treePath(key);
  if (tree === null) {
    // No tree node (an import, a hand-made record): the record alone, if it is the one seen.
    if (record === null || record.czxid > victim.zxid) return null;
    return {
      victim,
      key,
      ops: [{ op: 'delete', path: recordPath, version: record.version }],
      leaf: false,
    };
  }
  if (tree.mzxid > victim.zxid) return null;
  const leaf = tree.numChildren === 0;
  const ops: Op[] = leaf
    ? [
        { op: 'delete', path: recordPath },
        { op: 'delete', path: treePath, version: tree.version },
      ]
    : [
        { op: 'check', path: treePath, version: tree.version },
        { op: 'delete', path: recordPath },
      ];
  return { victim, key, ops, leaf };
}

/**
 * Removes completed records (and the tree nodes of completed leaves) in multis of
 * {@link REMOVE_BATCH}; a multi that fails (one record changed meanwhile) is redone one task
 * at a time, so one changed task does not keep its neighbours. `forget` is told about every
 * victim handled (removed or skipped; `relist` when it changed and must be seen again).
 */
export async function removeCompleted(
  ctx: EngineContext,
  victims: readonly Indexed[],
  forget: (v: Indexed, relist: boolean) => void,
  onProgress?: (done: number) => void,
): Promise<RemoveReport> {
  const report = emptyRemoveReport();
  const parents = new Map<string, TaskKey>();
  let next = 0;
  let done = 0;
  // A few batches in flight: each is two round trips (stats, multi), and one at a time
  // cannot keep up with a busy world on a loaded server.
  const lane = async () => {
    while (next < victims.length) {
      const batch = victims.slice(next, next + REMOVE_BATCH);
      next += batch.length;
      await removeBatch(ctx, batch, forget, report, parents);
      done += batch.length;
      onProgress?.(done);
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  report.treeNodes += await removeBareAncestors(ctx, [...parents.values()]);
  return report;
}

/** Batches of {@link removeCompleted} in flight at once. */
const LANES = 8;

async function removeBatch(
  ctx: EngineContext,
  batch: readonly Indexed[],
  forget: (v: Indexed, relist: boolean) => void,
  report: RemoveReport,
  parents: Map<string, TaskKey>,
): Promise<void> {
  const c = ctx.coordinator;
  const trees = await Promise.all(
    batch.map((v) => c.exists(ctx.layout.treePath(v.name.split(KEY_SEPARATOR)))),
  );
  const records = await Promise.all(
    batch.map((v, j) => (trees[j] === null ? c.exists(`${v.dir}/${v.name}`) : null)),
  );
  const planned: Planned[] = [];
  batch.forEach((v, j) => {
    const p = plan(ctx, v, trees[j]!, records[j]!);
    if (p) planned.push(p);
    else {
      report.skipped++;
      forget(v, true);
    }
  });
  const applied = await applyPlanned(ctx, planned);
  for (const p of planned) {
    const ok = applied.has(p);
    forget(p.victim, !ok);
    if (!ok) {
      report.skipped++;
      continue;
    }
    report.records++;
    if (p.leaf) {
      report.treeNodes++;
      if (p.key.length > 1) {
        const parent = p.key.slice(0, -1);
        parents.set(parent.join(KEY_SEPARATOR), parent);
      }
    }
  }
}

/** One multi for all; when it fails, one multi per task. The ones that applied. */
async function applyPlanned(ctx: EngineContext, planned: Planned[]): Promise<Set<Planned>> {
  if (planned.length === 0) return new Set();
  try {
    await ctx.coordinator.multi(planned.flatMap((p) => p.ops));
    return new Set(planned);
  } catch (err) {
    if (!codeOf(err) || planned.length === 1) {
      if (planned.length === 1 && isRace(err)) return new Set();
      throw err;
    }
  }
  const ok = new Set<Planned>();
  await Promise.all(
    planned.map(async (p) => {
      try {
        await ctx.coordinator.multi(p.ops);
        ok.add(p);
      } catch (err) {
        if (!isRace(err)) throw err;
      }
    }),
  );
  return ok;
}

function isRace(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'NO_NODE' || code === 'BAD_VERSION' || code === 'NOT_EMPTY';
}

/**
 * Tree nodes left bare below a removed leaf: a parent whose own record went earlier (records
 * go oldest first, and a parent completes before its children run) stays in the tree while
 * it has children; once the last one is gone and it has no state left (no entry, claim,
 * completed or failed record), it goes too, and so on upwards. The version guard keeps a
 * parent that is being queued again meanwhile.
 */
async function removeBareAncestors(ctx: EngineContext, keys: TaskKey[]): Promise<number> {
  const { coordinator: c, layout } = ctx;
  let removed = 0;
  let level = keys;
  while (level.length > 0) {
    const next = new Map<string, TaskKey>();
    await Promise.all(
      level.map(async (key) => {
        const [tree, working, completed, failed, entry] = await Promise.all([
          c.exists(layout.treePath(key)),
          c.exists(layout.recordPath(AREA.working, key)),
          c.exists(layout.recordPath(AREA.completed, key)),
          c.exists(layout.recordPath(AREA.failed, key)),
          findEntry(ctx, key),
        ]);
        if (!tree || tree.numChildren > 0 || working || completed || failed || entry) return;
        try {
          await c.delete(layout.treePath(key), tree.version);
          removed++;
          if (key.length > 1) {
            const parent = key.slice(0, -1);
            next.set(parent.join(KEY_SEPARATOR), parent);
          }
        } catch (err) {
          if (!isRace(err)) throw err;
        }
      }),
    );
    level = [...next.values()];
  }
  return removed;
}
