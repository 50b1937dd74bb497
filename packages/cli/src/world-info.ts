import {
  type ClaimIdentity,
  type Engine,
  isZoottError,
  type TaskKey,
  type TaskStateName,
} from '@zoott/core';
import {
  bucketNumbers,
  type CorruptSink,
  decodeKey,
  type EntryData,
  entryState,
  type ListedRecord,
  listBucket,
  nodeShapes,
  readNode,
  type WorkerInfo,
  waitingEntries,
} from '@zoott/core/internal';

/** A live worker as the registry shows it, with the tasks it holds right now. */
export interface WorkerView extends Omit<WorkerInfo, 'version'> {
  /** Registry node name: `worker-_p<hex>_<seq>` on ZooKeeper (a protected create). */
  node: string;
  /** Keys (`a|b|c`) of the tasks this worker holds a claim on. */
  running: string[];
}

/** A node's data and stat, or `null` when it is gone (it left while we looked). */
async function getOrNull(engine: Engine, path: string) {
  try {
    return await engine.coordinator.get(path);
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return null;
    throw err;
  }
}

/**
 * The encoded keys of the live claims among a working bucket's records: a claim's node is
 * ephemeral, so a persistent one (by hand, or recreated by an import) is no claim and its
 * task is not working, as the engine counts it. One stat per working node (few: one per
 * running task).
 */
async function liveClaims(engine: Engine, records: ListedRecord[]): Promise<Set<string>> {
  const live = await Promise.all(
    records.map(async (record) => {
      try {
        const stat = await engine.coordinator.exists(record.path);
        return stat?.ephemeralOwner ? record.encodedKey : null;
      } catch (err) {
        if (isZoottError(err, 'NO_NODE')) return null;
        throw err;
      }
    }),
  );
  return new Set(live.filter((key): key is string => key !== null));
}

/**
 * Who holds each working task: key → claim (read from the working nodes). A working node
 * that is not a claim is reported to `sink` and left out.
 */
export async function claimsByKey(
  engine: Engine,
  sink: CorruptSink,
): Promise<Map<string, ClaimIdentity>> {
  const { layout } = await engine.context();
  const out = new Map<string, ClaimIdentity>();
  await Promise.all(
    bucketNumbers(layout).map(async (bucket) => {
      const { working } = await listBucket(engine.coordinator, layout, bucket, ['working'], {
        absent: 'empty',
      });
      await Promise.all(
        working.map(async ({ encodedKey, path }) => {
          const got = await getOrNull(engine, path);
          // Only an ephemeral node is a claim; a persistent one is reported by `doctor`.
          if (!got || got.stat.ephemeralOwner === null) return;
          const claim = readNode<ClaimIdentity>(got.data, path, nodeShapes.claim, sink);
          if (claim) out.set(encodedKey, claim);
        }),
      );
    }),
  );
  return out;
}

/**
 * The live workers of the engine's world (registry children), oldest first. A registry node
 * that is not a worker's (unreadable, or persistent: no session owns it) is reported to
 * `sink` and left out.
 */
export async function listWorkers(engine: Engine, sink: CorruptSink): Promise<WorkerView[]> {
  const ctx = await engine.context();
  const dir = ctx.layout.registry;
  const [names, claims] = await Promise.all([
    engine.coordinator
      .children(dir)
      .catch((err: unknown) => (isZoottError(err, 'NO_NODE') ? [] : Promise.reject(err))),
    claimsByKey(engine, sink),
  ]);
  const views = await Promise.all(
    names.sort().map(async (node): Promise<WorkerView | null> => {
      const path = `${dir}/${node}`;
      const got = await getOrNull(engine, path);
      if (!got) return null;
      // A persistent node is no worker: it would show "alive" forever (`doctor` moves it).
      if (got.stat.ephemeralOwner === null) {
        sink({
          path,
          reason:
            'a persistent node, not a live worker (registrations are ephemeral: they go with ' +
            "the worker's session); `zoott doctor --repair` moves it away",
        });
        return null;
      }
      const info = readNode<WorkerInfo>(got.data, path, nodeShapes.worker, sink);
      if (!info) return null;
      const running = [...claims].filter(([, who]) => who.worker === info.id).map(([k]) => k);
      const view: WorkerView = {
        node,
        id: info.id,
        types: Array.isArray(info.types) ? info.types : [],
        buckets: Array.isArray(info.buckets) ? info.buckets : [],
        started: info.started,
        running: running.sort(),
      };
      if (info.host !== undefined) view.host = info.host;
      if (info.pid !== undefined) view.pid = info.pid;
      if (info.server !== undefined) view.server = info.server;
      return view;
    }),
  );
  return views.filter((v): v is WorkerView => v !== null);
}

/** What waits in the pending area: when the oldest was queued, and how many of each type. */
export interface PendingSummary {
  /** When the oldest waiting task was queued (ms), `null` when none waits. */
  oldest: number | null;
  /** Waiting tasks per type (a corrupt entry has no type and is not counted). */
  byType: Record<string, number>;
}

/**
 * Reads every waiting entry (pending, not working, not failed): one small read per entry,
 * all of a bucket at once. An entry that cannot be read is reported to `sink`; it still has
 * an age (its node's creation time).
 */
export async function pendingSummary(engine: Engine, sink: CorruptSink): Promise<PendingSummary> {
  const { layout } = await engine.context();
  const byType: Record<string, number> = {};
  let oldest: number | null = null;
  await Promise.all(
    bucketNumbers(layout).map(async (bucket) => {
      const listing = await listBucket(engine.coordinator, layout, bucket, ['pending', 'working'], {
        absent: 'empty',
      });
      const working = await liveClaims(engine, listing.working);
      await Promise.all(
        waitingEntries(listing.pending, working).map(async ({ path }) => {
          const got = await getOrNull(engine, path);
          if (!got) return;
          const entry = readNode<EntryData>(got.data, path, nodeShapes.entry, sink);
          const at = typeof entry?.queuedAt === 'number' ? entry.queuedAt : got.stat.ctime;
          oldest = oldest === null ? at : Math.min(oldest, at);
          if (entry && typeof entry.type === 'string')
            byType[entry.type] = (byType[entry.type] ?? 0) + 1;
        }),
      );
    }),
  );
  return { oldest, byType };
}

/** A task of `ls`: what `show` will find under the same key. */
export interface CheckedTask {
  key: TaskKey;
  state: TaskStateName;
  priority?: number;
  /** Path of the node `ls` read for it: the pending entry, or the working/completed record. */
  path: string;
  /** A delayed (or retrying) task's earliest start, ms since the epoch. */
  notBefore?: number;
}

/**
 * The tasks in one state, in claim order per bucket, listed only when `show` finds them
 * too: each must have its tree node, a valid key and sit in its key's bucket. Anything else
 * in the area (an entry without a task, in the wrong bucket, with a bad key) is reported to
 * `sink` instead of listed. Pending and failed entries are read and checked as well (a
 * corrupt one is listed and reported); completed records are not read (they can be large).
 */
export async function checkedList(
  engine: Engine,
  state: TaskStateName,
  sink: CorruptSink,
): Promise<CheckedTask[]> {
  const ctx = await engine.context();
  const { layout } = ctx;
  const coordinator = engine.coordinator;
  const perBucket = await Promise.all(
    bucketNumbers(layout).map(async (bucketNo): Promise<CheckedTask[]> => {
      const listing = await listBucket(
        coordinator,
        layout,
        bucketNo,
        ['pending', 'working', 'completed'],
        { absent: 'empty' },
      );
      // Only a live claim makes its task working (a persistent working node is no claim).
      const working = await liveClaims(engine, listing.working);
      // A completed record wins over an entry of the same key, as in `show`.
      const completed = new Set(listing.completed.map((record) => record.encodedKey));
      const found: (CheckedTask & { encoded: string; entry?: boolean })[] = [];
      if (state === 'completed')
        for (const record of listing.completed)
          found.push({ key: [], encoded: record.encodedKey, state, path: record.path });
      else {
        // The pending listing comes in claim order.
        for (const entry of listing.pending) {
          const shown: TaskStateName = entryState(entry, working);
          if (shown !== state || completed.has(entry.encodedKey)) continue;
          found.push({
            key: [],
            encoded: entry.encodedKey,
            state: shown,
            priority: entry.priority,
            path: entry.path,
            entry: true,
          });
        }
      }
      const checked = await Promise.all(
        found.map(async (task): Promise<CheckedTask | null> => {
          let key: TaskKey;
          try {
            key = decodeKey(task.encoded, ctx.limits);
          } catch (err) {
            sink({
              path: task.path,
              reason: `its name holds no valid task key: ${(err as Error).message}`,
            });
            return null;
          }
          const home = layout.bucketOf(key);
          if (home !== bucketNo) {
            sink({
              path: task.path,
              reason: `it sits in bucket ${bucketNo}, but task ${task.encoded} belongs in bucket ${home}`,
            });
            return null;
          }
          const treePath = layout.treePath(key);
          const [node, got] = await Promise.all([
            coordinator.exists(treePath),
            task.entry && state !== 'working'
              ? getOrNull(engine, task.path)
              : Promise.resolve(null),
          ]);
          if (!node) {
            sink({
              path: task.path,
              reason: `task ${task.encoded} has no tree node (${treePath})`,
            });
            return null;
          }
          const entry = got
            ? readNode<EntryData>(got.data, task.path, nodeShapes.entry, sink)
            : null;
          const out: CheckedTask = { key, state: task.state, path: task.path };
          if (task.priority !== undefined) out.priority = task.priority;
          if (typeof entry?.notBefore === 'number') out.notBefore = entry.notBefore;
          return out;
        }),
      );
      return checked.filter((t): t is CheckedTask => t !== null);
    }),
  );
  return perBucket.flat();
}
