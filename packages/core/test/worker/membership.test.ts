import { type Coordinator, createEngine, runWorker } from '@zoott/core';
import {
  ownedBuckets,
  REGISTRY_PACE_MAX_MS,
  REGISTRY_PACE_MS,
  WorkerMembership,
} from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';

/**
 * `c`, with a hook that runs after each registry listing's reply arrived and before its
 * caller goes on: what a session loss handled while the listing was out looks like.
 */
/** `c`, counting the reads of each path under `under` (listings and node reads). */
function readsUnder(c: Coordinator, under: string): { c: Coordinator; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const proxy = new Proxy(c, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (path: unknown, ...rest: unknown[]) => {
        const read = ['get', 'children', 'childrenWithStat', 'exists'].includes(String(prop));
        if (read && typeof path === 'string' && path.startsWith(under)) {
          const k = `${String(prop)} ${path}`;
          reads.set(k, (reads.get(k) ?? 0) + 1);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, [path, ...rest]);
      };
    },
  });
  return { c: proxy, reads };
}

function afterListing(c: Coordinator, registry: string, hook: () => void): Coordinator {
  return new Proxy(c, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'children') return typeof value === 'function' ? value.bind(target) : value;
      return async (path: string, ...rest: unknown[]) => {
        const out = await (value as (...a: unknown[]) => Promise<string[]>).apply(target, [
          path,
          ...rest,
        ]);
        if (path === registry) hook();
        return out;
      };
    },
  });
}

describeOnBackends('engine: worker membership', (backend) => {
  it('a session lost while the registry listing is out ends the rebalance quietly', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    let membership: WorkerMembership | null = null;
    let lose = false;
    const wrapped = afterListing(c, registry, () => {
      if (lose) membership?.sessionLost();
    });
    const member = new WorkerMembership(
      wrapped,
      createEngine(wrapped, { world, logger: memoryLogger() }),
      { id: 'w1', types: ['t'], startedAt: 1 },
      () => {},
      () => {},
    );
    membership = member;
    await member.register();
    expect(await member.rebalance(() => {})).toHaveLength(8);
    member.dirty = true;
    await c.create(`${registry}/worker-`, new Uint8Array(), { ephemeral: true, sequential: true });
    lose = true;
    // A re-read this soon after the last is paced (it lists nothing and returns null): ask
    // until one lists, which the session lost meanwhile shows (the registration is gone).
    // The listing's reply comes back after the session was lost: nothing to recompute for.
    const owned: number[][] = [];
    await eventually(async () => {
      expect(await member.rebalance((o) => owned.push(o))).toBeNull();
      return member.registryPath === null;
    });
    expect(owned).toEqual([]);
    expect(member.registryPath).toBeNull();
    expect(member.dirty).toBe(true);
  });

  it('reads each registration once, and lists the registry once per change, reaper included', async () => {
    const c = await backend().connect();
    const world = worldName();
    const setup = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await setup.init();
    const registry = (await setup.context()).layout.registry;
    const counted = readsUnder(c, registry);
    let passes = 0;
    const worker = runWorker(
      counted.c,
      { t: () => {} },
      {
        world,
        logger: memoryLogger(),
        scheduler: false,
        pollMs: 20,
        retention: { intervalMs: 20, busyIntervalMs: 20, onPass: () => passes++ },
      },
    );
    try {
      await eventually(() => worker.buckets.length === 8);
      // Three more workers join, one at a time: each a change the worker sees.
      const others = await Promise.all([1, 2, 3].map(() => backend().connect()));
      const gets = () => [...counted.reads].filter(([k]) => k.startsWith('get '));
      for (const [i, o] of others.entries()) {
        await o.create(`${registry}/worker-`, new Uint8Array(), {
          ephemeral: true,
          sequential: true,
        });
        // The worker has read the new registration (its own and i + 1 others before it)...
        await eventually(() => gets().length === i + 2);
        // ... and its reaper has passed since, electing itself from that view.
        const seen = passes;
        await eventually(() => passes >= seen + 2);
      }
      expect(gets()).toHaveLength(4);
      for (const [k, n] of gets()) expect([k, n]).toEqual([k, 1]);
      const listings = counted.reads.get(`children ${registry}`) ?? 0;
      // One listing per change (the worker's own registration and three joins): the reaper's
      // election reads none of its own.
      expect(listings).toBeLessThanOrEqual(4);
    } finally {
      await worker.stop();
    }
  });

  it('lists the registry a bounded number of times while a fleet keeps joining, and settles soon after', async () => {
    const c = await backend().connect();
    const world = worldName();
    const setup = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await setup.init();
    const registry = (await setup.context()).layout.registry;
    const counted = readsUnder(c, registry);
    const worker = runWorker(
      counted.c,
      { t: () => {} },
      { world, logger: memoryLogger(), scheduler: false, retention: false, pollMs: 20 },
    );
    const joined = await Promise.all(Array.from({ length: 30 }, () => backend().connect()));
    try {
      await eventually(() => worker.buckets.length === 8);
      const listings = () => counted.reads.get(`children ${registry}`) ?? 0;
      const before = listings();
      // A wave: 30 registrations, 100 ms apart (3 s), each firing the worker's watch.
      const started = Date.now();
      for (const o of joined) {
        await o.create(`${registry}/worker-`, new Uint8Array(), {
          ephemeral: true,
          sequential: true,
        });
        await new Promise((r) => setTimeout(r, 100));
      }
      const last = Date.now();
      // Settled within the longest pace (and a loaded machine's slack) of the last join.
      const live = await c.children(registry);
      const me = worker.registryPath?.slice(worker.registryPath.lastIndexOf('/') + 1) ?? '';
      const share = ownedBuckets(me, live, 8).join();
      await eventually(() => worker.buckets.join() === share, REGISTRY_PACE_MAX_MS + 4_000);
      const spent = listings() - before;
      // At the least pace the wave cost one listing per 200 ms (15 and more here); the pace
      // doubles while changes keep coming, up to 1 s: about one per second of the wave.
      const waveS = (last - started) / 1000;
      expect(spent, `${spent} listings over ${waveS.toFixed(1)} s`).toBeLessThanOrEqual(
        Math.ceil(waveS * (1000 / REGISTRY_PACE_MAX_MS)) + 4,
      );
      expect(REGISTRY_PACE_MS).toBeLessThan(REGISTRY_PACE_MAX_MS);
    } finally {
      await worker.stop();
      await Promise.all(joined.map((o) => o.close()));
    }
  });

  it('says who is alive only once a seen registry change is read: a paced re-read leaves it unknown', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const member = new WorkerMembership(
      c,
      createEngine(c, { world, logger: memoryLogger() }),
      { id: 'w1', types: ['t'], startedAt: 1 },
      () => {},
      () => {},
    );
    await member.register();
    await member.rebalance(() => {});
    expect(member.peers()).toEqual([]);
    // Another worker joins right after that read: its watch fires, and the re-read is paced.
    const peer = new WorkerMembership(
      c,
      createEngine(c, { world, logger: memoryLogger() }),
      { id: 'w2', types: ['t'], startedAt: 2, server: 'node-2' },
      () => {},
      () => {},
    );
    await peer.register();
    await eventually(() => member.dirty);
    await expect(member.rebalance(() => {})).resolves.toBeNull();
    // Until it is read, a hint naming the new worker must not be taken as naming a dead one.
    expect(member.peers()).toBeUndefined();
    await eventually(async () => (await member.rebalance(() => {})) !== null || !member.dirty);
    expect(member.peers()?.length).toBe(1);
    await Promise.all([member.unregister(), peer.unregister()]);
  });
});
