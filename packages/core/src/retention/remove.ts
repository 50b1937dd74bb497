import type { Op, Stat } from '../contract/coordinator.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf, multiFailure } from '../engine/errors.js';
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
  /** Planned from the record's own `treeVersion`, without a read of the tree node. */
  fromRecord: boolean;
  /** The version the tree node is guarded with (-1: the record alone, no tree node). */
  treeVersion: number;
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
  if (tree === null) {
    // No tree node (an import, a hand-made record): the record alone, if it is the one seen.
    if (record === null || record.czxid > victim.zxid) return null;
    return {
      victim,
      key,
      ops: [{ op: 'delete', path: recordPath, version: record.version }],
      leaf: false,
      fromRecord: false,
      treeVersion: -1,
    };
  }
  if (tree.mzxid > victim.zxid) return null;
  return guarded(ctx, victim, key, tree.version, tree.numChildren === 0, false);
}

/**
 * A leaf goes with its record (`delete record` + `delete tree node @version`); a task with
 * children keeps its node (`check tree node @version` + `delete record`).
 */
function guarded(
  ctx: EngineContext,
  victim: Indexed,
  key: TaskKey,
  treeVersion: number,
  leaf: boolean,
  fromRecord: boolean,
): Planned {
  const recordPath = `${victim.dir}/${victim.name}`;
  const treePath = ctx.layout.treePath(key);
  const ops: Op[] = leaf
    ? [
        { op: 'delete', path: recordPath },
        { op: 'delete', path: treePath, version: treeVersion },
      ]
    : [
        { op: 'check', path: treePath, version: treeVersion },
        { op: 'delete', path: recordPath },
      ];
  return { victim, key, ops, leaf, fromRecord, treeVersion };
}

/** A record's `treeVersion` (see `CompletedRecord`), or null for a record without one. */
function recordTreeVersion(data: Uint8Array): number | null {
  try {
    const version = (JSON.parse(Buffer.from(data).toString('utf8')) as { treeVersion?: unknown })
      .treeVersion;
    return Number.isInteger(version) && (version as number) >= 0 ? (version as number) : null;
  } catch {
    return null;
  }
}

/**
 * Removes completed records (and the tree nodes of completed leaves) in multis of
 * {@link REMOVE_BATCH}; a multi that fails (one record changed meanwhile) is redone without
 * the task it names, so one changed task does not keep its neighbours. `forget` is told about
 * every victim handled (removed or skipped; `relist` when it changed and must be seen again).
 */
export async function removeCompleted(
  ctx: EngineContext,
  victims: readonly Indexed[],
  forget: (victim: Indexed, relist: boolean) => void,
  onProgress?: (done: number) => void,
): Promise<RemoveReport> {
  const report = emptyRemoveReport();
  const parents = new Map<string, TaskKey>();
  let next = 0;
  let done = 0;
  // A few batches in flight: each is two round trips (reads, multi), and one at a time
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

/**
 * Plans a batch's removals. The records are read first (plain reads, which the ZooKeeper
 * adapter sends 32 to a request): one that carries its tree node's version is removed
 * guarded by that version, and its own creation (`czxid`) tells whether it is the record the
 * index saw; its tree node is not read. Only records without the version (written before it
 * was kept) and those whose guess failed cost an `exists` of their tree node.
 */
async function planBatch(
  ctx: EngineContext,
  batch: readonly Indexed[],
  skip: (victim: Indexed) => void,
): Promise<Planned[]> {
  const coordinator = ctx.coordinator;
  const records = await Promise.all(
    batch.map((v) => coordinator.get(`${v.dir}/${v.name}`).catch(noNodeAsNull)),
  );
  const planned: Planned[] = [];
  const unread: Indexed[] = [];
  for (let j = 0; j < batch.length; j++) {
    const victim = batch[j]!;
    const rec = records[j]!;
    // Gone (re-queued, cancelled, removed by hand), or a newer record under the same name.
    if (rec === null || rec.stat.czxid > victim.zxid) {
      skip(victim);
      continue;
    }
    const version = recordTreeVersion(rec.data);
    if (version === null) unread.push(victim);
    // Most completed tasks are leaves; a parent's guess fails and is redone (applyPlanned).
    else planned.push(guarded(ctx, victim, victim.name.split(KEY_SEPARATOR), version, true, true));
  }
  return planned.concat(await planByTree(ctx, unread, skip));
}

/** Plans removals by reading each task's tree node (and its record where the node is gone). */
async function planByTree(
  ctx: EngineContext,
  victims: readonly Indexed[],
  skip: (victim: Indexed) => void,
): Promise<Planned[]> {
  if (victims.length === 0) return [];
  const coordinator = ctx.coordinator;
  const trees = await Promise.all(
    victims.map((v) => coordinator.exists(ctx.layout.treePath(v.name.split(KEY_SEPARATOR)))),
  );
  const records = await Promise.all(
    victims.map((v, j) => (trees[j] === null ? coordinator.exists(`${v.dir}/${v.name}`) : null)),
  );
  const planned: Planned[] = [];
  victims.forEach((victim, index) => {
    const victimPlan = plan(ctx, victim, trees[index]!, records[index]!);
    if (victimPlan) planned.push(victimPlan);
    else skip(victim);
  });
  return planned;
}

function noNodeAsNull(err: unknown): null {
  if (codeOf(err) === 'NO_NODE') return null;
  throw err;
}

async function removeBatch(
  ctx: EngineContext,
  batch: readonly Indexed[],
  forget: (victim: Indexed, relist: boolean) => void,
  report: RemoveReport,
  parents: Map<string, TaskKey>,
): Promise<void> {
  const skip = (victim: Indexed) => {
    report.skipped++;
    forget(victim, true);
  };
  const planned = await planBatch(ctx, batch, skip);
  const { applied, failed } = await applyPlanned(ctx, planned);
  // A version taken from the record that did not hold (the tree node changed otherwise, or
  // is gone): planned again from the tree node as it is now.
  const again = await planByTree(
    ctx,
    failed.filter((p) => p.fromRecord).map((p) => p.victim),
    skip,
  );
  const second = await applyPlanned(ctx, again);
  for (const victimPlan of [...failed, ...second.failed])
    if (!victimPlan.fromRecord) skip(victimPlan.victim);
  for (const victimPlan of [...applied, ...second.applied]) {
    forget(victimPlan.victim, false);
    report.records++;
    if (victimPlan.leaf) {
      report.treeNodes++;
      if (victimPlan.key.length > 1) {
        const parent = victimPlan.key.slice(0, -1);
        parents.set(parent.join(KEY_SEPARATOR), parent);
      }
    }
  }
}

/** Rounds of one multi for a batch before the rest goes one task at a time. */
const BATCH_ROUNDS = 8;

/**
 * One multi for all. When it fails on one task's op, that task is taken out (a leaf guessed
 * from the record that has children is planned again as one, with a `check`) and the rest
 * sent again; after a few rounds, or a failure that names no op, one multi per task. What
 * applied, and what failed on a race.
 */
async function applyPlanned(
  ctx: EngineContext,
  planned: Planned[],
): Promise<{ applied: Planned[]; failed: Planned[] }> {
  const applied: Planned[] = [];
  const failed: Planned[] = [];
  let left = planned;
  for (let round = 0; left.length > 0 && round < BATCH_ROUNDS; round++) {
    let err: unknown;
    try {
      await ctx.coordinator.multi(left.flatMap((p) => p.ops));
      applied.push(...left);
      return { applied, failed };
    } catch (caught) {
      err = caught;
    }
    const at = failedPlan(left, err);
    if (!at) break;
    left = left.filter((p) => p !== at.plan);
    if (at.code === 'NOT_EMPTY' && at.plan.leaf)
      left.push(
        guarded(ctx, at.plan.victim, at.plan.key, at.plan.treeVersion, false, at.plan.fromRecord),
      );
    else failed.push(at.plan);
  }
  await Promise.all(
    left.map(async (victimPlan) => {
      try {
        await ctx.coordinator.multi(victimPlan.ops);
        applied.push(victimPlan);
      } catch (err) {
        if (!isRace(err)) throw err;
        if (codeOf(err) === 'NOT_EMPTY' && victimPlan.leaf) {
          const parent = guarded(
            ctx,
            victimPlan.victim,
            victimPlan.key,
            victimPlan.treeVersion,
            false,
            victimPlan.fromRecord,
          );
          try {
            await ctx.coordinator.multi(parent.ops);
            applied.push(parent);
            return;
          } catch (err2) {
            if (!isRace(err2)) throw err2;
          }
        }
        failed.push(victimPlan);
      }
    }),
  );
  return { applied, failed };
}

/**
 * The plan whose op failed the multi, and the server's verdict on it; null when the failure
 * names no op (connection trouble: thrown again) or is no race.
 */
function failedPlan(left: Planned[], err: unknown): { plan: Planned; code: string } | null {
  const failure = multiFailure(err);
  if (!failure || !isRace(err)) {
    if (!codeOf(err)) throw err;
    return null;
  }
  if (failure.index < 0) return null;
  let first = 0;
  for (const planned of left) {
    if (failure.index < first + planned.ops.length) return { plan: planned, code: failure.code };
    first += planned.ops.length;
  }
  return null;
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
  const { coordinator, layout } = ctx;
  let removed = 0;
  let level = keys;
  while (level.length > 0) {
    const next = new Map<string, TaskKey>();
    await Promise.all(
      level.map(async (key) => {
        const [tree, working, completed, failed, entry] = await Promise.all([
          coordinator.exists(layout.treePath(key)),
          coordinator.exists(layout.recordPath(AREA.working, key)),
          coordinator.exists(layout.recordPath(AREA.completed, key)),
          coordinator.exists(layout.recordPath(AREA.failed, key)),
          findEntry(ctx, key),
        ]);
        if (!tree || tree.numChildren > 0 || working || completed || failed || entry) return;
        try {
          await coordinator.delete(layout.treePath(key), tree.version);
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
