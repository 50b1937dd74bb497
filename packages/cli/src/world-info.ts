import { type ClaimIdentity, type Engine, isZoottError } from '@zoott/core';
import { decodeJson, type EntryData, parseEntryName, type WorkerInfo } from '@zoott/core/internal';

/** A live worker as the registry shows it, with the tasks it holds right now. */
export interface WorkerView extends Omit<WorkerInfo, 'version'> {
  /** Registry node name, `worker-NNNNNNNNNN`. */
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

/** Who holds each working task: key → worker id (read from the working nodes). */
export async function claimsByKey(engine: Engine): Promise<Map<string, ClaimIdentity>> {
  const ctx = await engine.context();
  const c = engine.coordinator;
  const out = new Map<string, ClaimIdentity>();
  await Promise.all(
    range(ctx.layout.buckets).map(async (b) => {
      const dir = ctx.layout.bucketPath('w', b);
      const keys = await absentIsEmpty(c.children(dir));
      await Promise.all(
        keys.map(async (k) => {
          try {
            const got = await c.get(`${dir}/${k}`);
            // Only an ephemeral node is a claim; a persistent one is reported by `doctor`.
            if (got.stat.ephemeralOwner === null) return;
            out.set(k, decodeJson<ClaimIdentity>(got.data, `${dir}/${k}`));
          } catch (err) {
            if (!isZoottError(err, 'NO_NODE')) throw err;
          }
        }),
      );
    }),
  );
  return out;
}

/** The live workers of the engine's world (registry children), oldest first. */
export async function listWorkers(engine: Engine): Promise<WorkerView[]> {
  const ctx = await engine.context();
  const c = engine.coordinator;
  const dir = ctx.layout.registry;
  const [names, claims] = await Promise.all([absentIsEmpty(c.children(dir)), claimsByKey(engine)]);
  const views = await Promise.all(
    names.sort().map(async (node): Promise<WorkerView | null> => {
      try {
        const got = await c.get(`${dir}/${node}`);
        // A persistent node is no worker: it would show "alive" forever (`doctor` reports it).
        if (got.stat.ephemeralOwner === null) return null;
        const info = decodeJson<WorkerInfo>(got.data, `${dir}/${node}`);
        const running = [...claims].filter(([, who]) => who.worker === info.id).map(([k]) => k);
        const view: WorkerView = {
          node,
          id: info.id,
          types: info.types ?? [],
          buckets: info.buckets ?? [],
          started: info.started,
          running: running.sort(),
        };
        if (info.host !== undefined) view.host = info.host;
        if (info.pid !== undefined) view.pid = info.pid;
        if (info.server !== undefined) view.server = info.server;
        return view;
      } catch (err) {
        if (isZoottError(err, 'NO_NODE')) return null; // left while we looked
        throw err;
      }
    }),
  );
  return views.filter((v): v is WorkerView => v !== null);
}

/**
 * When the oldest task still waiting (pending, not working, not failed) was queued, or
 * `null` when none waits. Per bucket the first entry by sequence is the oldest queued there.
 */
export async function oldestPending(engine: Engine): Promise<number | null> {
  const ctx = await engine.context();
  const c = engine.coordinator;
  const times = await Promise.all(
    range(ctx.layout.buckets).map(async (b) => {
      const dir = ctx.layout.bucketPath('p', b);
      const [p, w] = await Promise.all([
        absentIsEmpty(c.children(dir)),
        absentIsEmpty(c.children(ctx.layout.bucketPath('w', b))),
      ]);
      const working = new Set(w);
      const waiting = p
        .flatMap((n) => parseEntryName(n) ?? [])
        .filter((e) => e.kind !== 'x' && !working.has(e.encodedKey))
        .sort((x, y) => x.seq - y.seq);
      const first = waiting[0];
      if (!first) return null;
      try {
        const got = await c.get(`${dir}/${first.name}`);
        return decodeJson<EntryData>(got.data, `${dir}/${first.name}`).queuedAt ?? got.stat.ctime;
      } catch (err) {
        if (isZoottError(err, 'NO_NODE')) return null;
        throw err;
      }
    }),
  );
  const known = times.filter((t): t is number => typeof t === 'number');
  return known.length === 0 ? null : Math.min(...known);
}
