import { type Coordinator, createEngine, runWorker } from '@zoott/core';
import {
  MAX_WORKER_TYPE_LENGTH,
  MAX_WORKER_TYPES,
  ownedBuckets,
  REGISTRY_PACE_MAX_MS,
  REGISTRY_PACE_MS,
  RegistryView,
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
/** A membership of `world` on `coordinator`, with its own engine; warnings go nowhere. */
function membershipOn(
  coordinator: Coordinator,
  world: string,
  identity: ConstructorParameters<typeof WorkerMembership>[2],
  onChange: () => void = () => {},
): WorkerMembership {
  const engine = createEngine(coordinator, { world, logger: memoryLogger() });
  return new WorkerMembership(coordinator, engine, identity, onChange, () => {});
}

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

/**
 * `c`, whose reads of registrations (nodes under `registry`) wait until `release()`: a
 * loaded server answering a fleet's N reads per worker.
 */
function heldReads(
  c: Coordinator,
  registry: string,
): { c: Coordinator; release: () => void; held: () => number } {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let held = 0;
  const proxy = new Proxy(c, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'get') return typeof value === 'function' ? value.bind(target) : value;
      return async (path: string, ...rest: unknown[]) => {
        if (path.startsWith(`${registry}/`)) {
          held++;
          await gate;
        }
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, [path, ...rest]);
      };
    },
  });
  return { c: proxy, release: () => open(), held: () => held };
}

/**
 * `count` registrations serving `t` made by `o` at once: more than a worker reads before it
 * takes its share (a fleet's join wave), so it takes its share first and reads them behind.
 */
async function registerMany(o: Coordinator, registry: string, count = 40): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      o.create(
        `${registry}/worker-`,
        new TextEncoder().encode(
          JSON.stringify({ id: `m${i}`, types: ['t'], buckets: [], started: i, version: 1 }),
        ),
        { ephemeral: true, sequential: true },
      ),
    ),
  );
}

/**
 * Rebalances `member` until the registry it listed is read: its registrations' reads run
 * behind the listing, and wake the worker (here: the next call) to take the shares again.
 */
async function settle(member: WorkerMembership): Promise<void> {
  await eventually(async () => {
    await member.rebalance(() => {});
    return !member.dirty && member.peers() !== undefined;
  });
}

describeOnBackends('engine: worker membership', (backend) => {
  it('refuses to register more task types, or longer ones, than the registry bound, naming the field', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const handlers = (types: string[]) => Object.fromEntries(types.map((t) => [t, () => {}]));
    const many = Array.from({ length: MAX_WORKER_TYPES + 1 }, (_, i) => `type-${i}`);
    expect(() => runWorker(c, handlers(many), { world, engine })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        field: 'handlers',
        message: expect.stringMatching(/1025 task types, at most 1024/),
      }),
    );
    const long = 'x'.repeat(MAX_WORKER_TYPE_LENGTH + 1);
    expect(() => runWorker(c, handlers(['t', long]), { world, engine })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        field: 'handlers',
        message: expect.stringMatching(/is no task type \(1 to 200 characters\)/),
      }),
    );
    // Nothing was registered by either.
    expect(await c.children((await engine.context()).layout.registry)).toEqual([]);
    // The bound itself registers.
    const worker = runWorker(c, handlers(many.slice(1)), {
      world,
      engine,
      logger: memoryLogger(),
      scheduler: false,
      retention: false,
    });
    await eventually(() => worker.buckets.length === 8);
    await worker.stop();
  });

  it("reads another worker's registration with too many or too long types as one whose types are unknown", async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    const register = async (types: string[], server: string) => {
      const info = { id: server, types, buckets: [], started: 1, version: 1, server };
      const path = await c.create(
        `${registry}/worker-`,
        new TextEncoder().encode(JSON.stringify(info)),
        { ephemeral: true, sequential: true },
      );
      return path.slice(path.lastIndexOf('/') + 1);
    };
    // Written by hand (a hostile or broken worker): no bound was asked at its registration.
    const many = await register(
      Array.from({ length: 5000 }, (_, i) => `type-${i}`),
      'many',
    );
    const long = await register(['t', 'y'.repeat(MAX_WORKER_TYPE_LENGTH + 1)], 'long');
    const fine = await register(['t', 'u'], 'fine');
    const view = new RegistryView(c, registry);
    await view.refresh(() => {});
    expect(view.names).toEqual([many, long, fine].sort());
    expect(view.typesOf(fine)).toEqual(['t', 'u']);
    expect(view.typesOf(many)).toBeNull();
    expect(view.typesOf(long)).toBeNull();
    // Still live workers: they may serve any type (rate limits count them), advertise none.
    expect(view.serving('type-7')).toBe(2);
    expect(view.serving('u')).toBe(3);
    const peers = view.peers('');
    expect(peers.find((p) => p.server === 'many')?.types).toEqual([]);
    expect(peers.find((p) => p.server === 'fine')?.types).toEqual(['t', 'u']);
  });

  it('takes its buckets from the registry listing before the new registrations are read', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    const member = membershipOn(c, world, { id: 'w1', types: ['t'], startedAt: 1 });
    await member.register();
    expect(await member.rebalance(() => {})).toHaveLength(8);
    // A wave of 40 workers joins; the reads of their registrations are held up (a loaded
    // server).
    const other = await backend().connect();
    await registerMany(other, registry);
    await new Promise((r) => setTimeout(r, REGISTRY_PACE_MS));
    const slow = heldReads(c, registry);
    const later = membershipOn(slow.c, world, { id: 'w3', types: ['t'], startedAt: 3 });
    await later.register();
    const me = later.registryPath?.slice(later.registryPath.lastIndexOf('/') + 1) ?? '';
    const live = await c.children(registry);
    const owned: number[][] = [];
    // Its share of the 42 is taken while the reads of the others are still out.
    await later.rebalance((o) => owned.push(o));
    expect(slow.held()).toBeGreaterThan(0);
    expect(later.owned).toEqual(ownedBuckets(me, live, 8));
    // Who is alive (for locality) is not known before the reads are.
    expect(later.peers()).toBeUndefined();
    slow.release();
    await eventually(async () => {
      await later.rebalance(() => {});
      return later.peers()?.length === 41;
    });
    await Promise.all([member.unregister(), later.unregister()]);
    await other.close();
  });

  it('watches no more buckets before the registrations are read than after', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    // A wave of workers serving t, as this one does.
    const others = [await backend().connect()];
    await registerMany(others[0]!, registry);
    const slow = heldReads(c, registry);
    const member = membershipOn(slow.c, world, { id: 'w', types: ['t'], startedAt: 1 });
    await member.register();
    const watched = () =>
      [0, 1, 2, 3, 4, 5, 6, 7].filter((b) => !member.owned.includes(b) && member.watches(b));
    await member.rebalance(() => {});
    const unread = watched();
    slow.release();
    await settle(member);
    // Counted as serving nothing, the unread ones left this worker the only one known to
    // serve t: it watched every bucket it does not own.
    expect(unread).toEqual(watched());
    expect(unread.length).toBeLessThan(8 - member.owned.length);
    await member.unregister();
    await Promise.all(others.map((o) => o.close()));
  });

  it('sends the listing a registry change calls for without waiting for the worker to ask', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    const counted = readsUnder(c, registry);
    const member = membershipOn(counted.c, world, { id: 'w1', types: ['t'], startedAt: 1 });
    await member.register();
    await settle(member);
    const listings = () => counted.reads.get(`children ${registry}`) ?? 0;
    const before = listings();
    // Another worker joins while this one's loop is busy elsewhere (it does not call in).
    const other = await backend().connect();
    await other.create(`${registry}/worker-`, new Uint8Array(), {
      ephemeral: true,
      sequential: true,
    });
    await eventually(() => listings() === before + 1);
    // The loop, back, takes its share from that listing without another.
    const me = member.registryPath?.slice(member.registryPath.lastIndexOf('/') + 1) ?? '';
    const share = ownedBuckets(me, await c.children(registry), 8);
    await expect(member.rebalance(() => {})).resolves.toEqual(share);
    expect(listings()).toBe(before + 1);
    await member.unregister();
    await other.close();
  });

  it('sends the next listing after one sent ahead when the registry changed while it was out', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    let hold: Promise<void> | null = null;
    let sent = 0;
    // The registry listing's reply is held (after the server answered and armed its watch).
    const held = new Proxy(c, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'children') return typeof value === 'function' ? value.bind(target) : value;
        return async (path: string, ...rest: unknown[]) => {
          if (path === registry) sent++;
          const out = await (value as (...a: unknown[]) => Promise<string[]>).apply(target, [
            path,
            ...rest,
          ]);
          if (path === registry && hold) await hold;
          return out;
        };
      },
    });
    const member = membershipOn(held, world, { id: 'w1', types: ['t'], startedAt: 1 });
    await member.register();
    await settle(member);
    let release: () => void = () => {};
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = sent;
    const others = await Promise.all([1, 2].map(() => backend().connect()));
    const join = (o: Coordinator) =>
      o.create(`${registry}/worker-`, new Uint8Array(), { ephemeral: true, sequential: true });
    // A join: the listing goes out ahead of the loop, and its reply is held...
    await join(others[0]!);
    await eventually(() => sent === before + 1);
    // ... while another join fires the watch that listing armed.
    await new Promise((r) => setTimeout(r, 50));
    await join(others[1]!);
    await eventually(() => member.dirty);
    hold = null;
    release();
    // Nobody asks (the loop is busy): the change is listed once the pace allows.
    await eventually(() => sent === before + 2);
    const me = member.registryPath?.slice(member.registryPath.lastIndexOf('/') + 1) ?? '';
    const share = ownedBuckets(me, await c.children(registry), 8);
    await eventually(async () => (await member.rebalance(() => {})) !== null || !member.dirty);
    expect(member.owned).toEqual(share);
    expect(sent).toBe(before + 2);
    await member.unregister();
    await Promise.all(others.map((o) => o.close()));
  });

  it('lists the registry again while the registrations of the last listing are still read', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    const wave = await backend().connect();
    await registerMany(wave, registry);
    const counted = readsUnder(c, registry);
    const slow = heldReads(counted.c, registry);
    let woken = 0;
    const member = membershipOn(
      slow.c,
      world,
      { id: 'w1', types: ['t'], startedAt: 1 },
      () => woken++,
    );
    await member.register();
    await member.rebalance(() => {});
    await eventually(() => slow.held() > 0);
    const listings = () => counted.reads.get(`children ${registry}`) ?? 0;
    const before = listings();
    // Another worker joins while this one still reads the wave's registrations.
    const other = await backend().connect();
    await other.create(`${registry}/worker-`, new Uint8Array(), {
      ephemeral: true,
      sequential: true,
    });
    await eventually(() => member.dirty || listings() > before);
    await new Promise((r) => setTimeout(r, REGISTRY_PACE_MS));
    await member.rebalance(() => {});
    expect(listings()).toBe(before + 1);
    const me = member.registryPath?.slice(member.registryPath.lastIndexOf('/') + 1) ?? '';
    expect(member.owned).toEqual(ownedBuckets(me, await c.children(registry), 8));
    // Once the reads are in, the worker is woken to take the shares again with them.
    const wokenBefore = woken;
    slow.release();
    await eventually(() => woken > wokenBefore);
    await settle(member);
    expect(member.peers()).toHaveLength(40);
    await member.unregister();
    await Promise.all([other.close(), wave.close()]);
  });

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
    const member = membershipOn(wrapped, world, { id: 'w1', types: ['t'], startedAt: 1 });
    membership = member;
    await member.register();
    expect(await member.rebalance(() => {})).toHaveLength(8);
    member.markChanged();
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
    const member = membershipOn(c, world, { id: 'w1', types: ['t'], startedAt: 1 });
    await member.register();
    await settle(member);
    expect(member.peers()).toEqual([]);
    // Another worker joins right after that read: its watch fires, and the re-read is paced.
    const peer = membershipOn(c, world, { id: 'w2', types: ['t'], startedAt: 2, server: 'node-2' });
    await peer.register();
    await eventually(() => member.dirty);
    await expect(member.rebalance(() => {})).resolves.toBeNull();
    // Until it is read, a hint naming the new worker must not be taken as naming a dead one.
    expect(member.peers()).toBeUndefined();
    await settle(member);
    expect(member.peers()?.length).toBe(1);
    await Promise.all([member.unregister(), peer.unregister()]);
  });
});
