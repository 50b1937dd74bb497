import {
  type ClaimIdentity,
  type Engine,
  isZoottError,
  type TaskKey,
  type TaskStateName,
} from '@zoott/core';
import {
  type CorruptSink,
  decodeKey,
  type EntryData,
  nodeShapes,
  parseEntryName,
  readNode,
  type WorkerInfo,
} from '@zoott/core/internal';

/** A live worker as the registry shows it, with the tasks it holds right now. */
export interface WorkerView extends Omit<WorkerInfo, 'version'> {
  /** Registry node name: `worker-_p<hex>_<seq>` on ZooKeeper (a protected create). */
  node: string;
  /** Keys (`a|b|c`) of the tasks this worker holds a claim on. */
  running: string[];
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

async function absentIsEmpty<T>(p: Promise<T[]>): Promise<T[]> {
  try {
    return await p;
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return [];
    throw err;
  }
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
 * The live claims among a working bucket's children (`names`): a claim's node is ephemeral,
 * so a persistent one (by hand, or recreated by an import) is no claim and its task is not
 * working, as the engine counts it. One stat per working node (few: one per running task).
 */
async function liveClaims(engine: Engine, dir: string, names: string[]): Promise<Set<string>> {
  const live = await Promise.all(
    names.map(async (n) => {
      try {
        const stat = await engine.coordinator.exists(`${dir}/${n}`);
        return stat?.ephemeralOwner ? n : null;
      } catch (err) {
        if (isZoottError(err, 'NO_NODE')) return null;
        throw err;
      }
    }),
  );
  return new Set(live.filter((n): n is string => n !== null));
}

/**
 * Who holds each working task: key → claim (read from the working nodes). A working node
 * that is not a claim is reported to `sink` and left out.
 */
export async function claimsByKey(
  engine: Engine,
  sink: CorruptSink,
): Promise<Map<string, ClaimIdentity>> {
  const ctx = await engine.context();
  const c = engine.coordinator;
  const out = new Map<string, ClaimIdentity>();
  await Promise.all(
    range(ctx.layout.buckets).map(async (b) => {
      const dir = ctx.layout.bucketPath('w', b);
      const keys = await absentIsEmpty(c.children(dir));
      await Promise.all(
        keys.map(async (k) => {
          const path = `${dir}/${k}`;
          const got = await getOrNull(engine, path);
          // Only an ephemeral node is a claim; a persistent one is reported by `doctor`.
          if (!got || got.stat.ephemeralOwner === null) return;
          const claim = readNode<ClaimIdentity>(got.data, path, nodeShapes.claim, sink);
          if (claim) out.set(k, claim);
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
  const c = engine.coordinator;
  const dir = ctx.layout.registry;
  const [names, claims] = await Promise.all([
    absentIsEmpty(c.children(dir)),
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
  const ctx = await engine.context();
  const c = engine.coordinator;
  const byType: Record<string, number> = {};
  let oldest: number | null = null;
  await Promise.all(
    range(ctx.layout.buckets).map(async (b) => {
      const dir = ctx.layout.bucketPath('p', b);
      const wDir = ctx.layout.bucketPath('w', b);
      const [p, w] = await Promise.all([
        absentIsEmpty(c.children(dir)),
        absentIsEmpty(c.children(wDir)),
      ]);
      const working = await liveClaims(engine, wDir, w);
      const waiting = p
        .flatMap((n) => parseEntryName(n) ?? [])
        .filter((e) => e.kind !== 'x' && !working.has(e.encodedKey));
      await Promise.all(
        waiting.map(async (e) => {
          const path = `${dir}/${e.name}`;
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
  const c = engine.coordinator;
  const perBucket = await Promise.all(
    range(layout.buckets).map(async (b): Promise<CheckedTask[]> => {
      const pDir = layout.bucketPath('p', b);
      const wDir = layout.bucketPath('w', b);
      const cDir = layout.bucketPath('c', b);
      const [p, w, done] = await Promise.all([
        absentIsEmpty(c.children(pDir)),
        absentIsEmpty(c.children(wDir)),
        absentIsEmpty(c.children(cDir)),
      ]);
      // Only a live claim makes its task working (a persistent working node is no claim).
      const working = await liveClaims(engine, wDir, w);
      // A completed record wins over an entry of the same key, as in `show`.
      const completed = new Set(done);
      const found: (CheckedTask & { encoded: string; seq: number; entry?: boolean })[] = [];
      if (state === 'completed')
        for (const k of done)
          found.push({ key: [], encoded: k, state, path: `${cDir}/${k}`, seq: 0 });
      else {
        const entries = p.flatMap((n) => parseEntryName(n) ?? []);
        entries.sort((x, y) =>
          x.priority !== y.priority ? y.priority - x.priority : x.seq - y.seq,
        );
        for (const e of entries) {
          const s: TaskStateName =
            e.kind === 'x' ? 'failed' : working.has(e.encodedKey) ? 'working' : 'pending';
          if (s !== state || completed.has(e.encodedKey)) continue;
          found.push({
            key: [],
            encoded: e.encodedKey,
            state: s,
            priority: e.priority,
            path: `${pDir}/${e.name}`,
            seq: e.seq,
            entry: true,
          });
        }
      }
      const checked = await Promise.all(
        found.map(async (t): Promise<CheckedTask | null> => {
          let key: TaskKey;
          try {
            key = decodeKey(t.encoded, ctx.limits);
          } catch (err) {
            sink({
              path: t.path,
              reason: `its name holds no valid task key: ${(err as Error).message}`,
            });
            return null;
          }
          const home = layout.bucketOf(key);
          if (home !== b) {
            sink({
              path: t.path,
              reason: `it sits in bucket ${b}, but task ${t.encoded} belongs in bucket ${home}`,
            });
            return null;
          }
          const treePath = layout.treePath(key);
          const [node, got] = await Promise.all([
            c.exists(treePath),
            t.entry && state !== 'working' ? getOrNull(engine, t.path) : Promise.resolve(null),
          ]);
          if (!node) {
            sink({ path: t.path, reason: `task ${t.encoded} has no tree node (${treePath})` });
            return null;
          }
          const entry = got ? readNode<EntryData>(got.data, t.path, nodeShapes.entry, sink) : null;
          const out: CheckedTask = { key, state: t.state, path: t.path };
          if (t.priority !== undefined) out.priority = t.priority;
          if (typeof entry?.notBefore === 'number') out.notBefore = entry.notBefore;
          return out;
        }),
      );
      return checked.filter((t): t is CheckedTask => t !== null);
    }),
  );
  return perBucket.flat();
}
