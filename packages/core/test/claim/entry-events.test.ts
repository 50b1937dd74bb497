import {
  type Claimer,
  type ClaimerOptions,
  type Coordinator,
  type Engine,
  runWorker,
  type TreeListener,
  ZoottError,
} from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  type CallCounts,
  counting,
  eventually,
  handsOff,
  holdingListings,
  memoryLogger,
  oneBucketEngine,
  oneBucketWorld,
} from '../engine/helpers.js';

/**
 * A world holding a first tree of two (t and its child l, queued by `other`), and a client of
 * its own for a worker.
 */
async function treeWorld(connect: () => Promise<Coordinator>) {
  const { world, other } = await oneBucketWorld(connect);
  await other.queue({ name: 't', type: 't' });
  await other.queue({ name: 'l', type: 't', parent: { key: ['t'] } });
  return { world, other, raw: await connect() };
}

/** Names of bucket 0's listing as `claimer` holds it, in claim order. */
const listed = (claimer: Claimer) =>
  (claimer.listings.get(0)?.entries ?? []).map((e) => e.encodedKey);

/**
 * `other` queues p (priority 10), which `claimer` claims once its event is in, then p's child
 * c, which `claimer` reads while p runs. Returns p's claim.
 */
async function parentThenChild(other: Engine, raw: Coordinator, claimer: Claimer) {
  await other.queue({ name: 'p', type: 't', priority: 10 });
  await raw.exists('/');
  const parent = await claimer.claim([0]);
  expect(parent?.key).toEqual(['p']);
  await other.queue({ name: 'c', type: 't', parent: { key: ['p'] }, priority: 10 });
  await raw.exists('/');
  await readIn(claimer, 'c');
  return parent!;
}

/** Waits until `claimer` has read the entry of the task named `name`. */
async function readIn(claimer: Claimer, name: string): Promise<void> {
  await eventually(() => {
    const st = claimer.listings.get(0);
    return [...(st?.cache.values() ?? [])].some((e) => e.data.name === name);
  });
}

/**
 * A coordinator whose tree watches are watched: how many are registered now, and a way to
 * make the adapter lack them or refuse them.
 */
function treeWatchSpy(c: Coordinator, mode: 'pass' | 'absent' | 'unimplemented' = 'pass') {
  const spy = { active: 0, calls: 0, resets: 0 };
  const coordinator = new Proxy(c, {
    get(target, prop, receiver) {
      if (prop !== 'watchTree') return Reflect.get(target, prop, receiver);
      if (mode === 'absent') return undefined;
      return async (path: string, listener: TreeListener) => {
        spy.calls++;
        if (mode === 'unimplemented') throw new ZoottError('UNIMPLEMENTED', 'addWatch', { path });
        const stop = await target.watchTree!(path, (e) => {
          if (e.type === 'reset') spy.resets++;
          listener(e);
        });
        spy.active++;
        let stopped = false;
        return () => {
          if (!stopped) spy.active--;
          stopped = true;
          stop();
        };
      };
    },
  });
  return { coordinator, spy };
}

describeOnBackends('claimer: new entries from tree watches (entryEvents)', (backend) => {
  /** A claimer on `world` through a client of its own (counted), watching bucket 0. */
  async function claimerOn(world: string, options: Partial<ClaimerOptions> = {}, wrap = false) {
    const raw = await backend().connect();
    const spied = treeWatchSpy(raw);
    const { c, ops, counts } = counting(wrap ? spied.coordinator : raw);
    const engine = oneBucketEngine(c, world);
    const claimer = await engine.claimer({ worker: 'w', entryEvents: true, ...options });
    claimer.setWatched([0]);
    return { raw, engine, claimer, ops, counts, spy: spied.spy };
  }

  /** Listings `counts` has seen so far. */
  const listings = (counts: CallCounts) =>
    (counts.byMethod.childrenWithStat ?? 0) + (counts.byMethod.children ?? 0);

  it('a bucket its tree watch covers is listed without a children watch; an own completion costs no re-read', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    await other.queue({ name: 'a', type: 't' });
    const { raw, engine, claimer, counts, spy } = await claimerOn(world, {}, true);
    await eventually(() => spy.active === 1);
    const a = await claimer.claim([0]);
    expect(a?.key).toEqual(['a']);
    await engine.complete(a!);
    // The deletion's event is in by the reply of a later request of this client.
    await raw.exists('/');
    const read = listings(counts);
    expect(read).toBe(1);
    expect(claimer.listings.get(0)?.stale).toBe(false);
    // A new entry comes by its event, and is claimed without a listing.
    await other.queue({ name: 'b', type: 't' });
    await raw.exists('/');
    expect(await claimer.claim([0])).toMatchObject({ key: ['b'] });
    expect(listings(counts)).toBe(read);
    await raw.close();
  });

  it('a root reported while a listing is out is not lost when that listing, read before it, lands', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    await other.queue({ name: 'a', type: 't' });
    const raw = await backend().connect();
    const spied = treeWatchSpy(raw);
    // What the claimer sees when a listing's reply and a later creation's event come in one
    // read from the socket: the event is handled before the reply's continuation runs.
    const { coordinator: c, hold, release } = holdingListings(spied.coordinator);
    const claimer = await oneBucketEngine(c, world).claimer({ worker: 'w', entryEvents: true });
    claimer.setWatched([0]);
    await eventually(() => spied.spy.active === 1);
    expect(await claimer.claim([0])).toMatchObject({ key: ['a'] });
    // A listing goes out and is answered without `b`; `b`'s event comes while it is held.
    claimer.touch(0);
    const held = hold();
    const reading = claimer.listings.refresh([0], true);
    await held;
    await other.queue({ name: 'b', type: 't' });
    await raw.exists('/');
    release();
    await reading;
    expect(await claimer.claim([0])).toMatchObject({ key: ['b'] });
    await raw.close();
  });

  it("another worker's completion in a covered bucket is a change: the listing is read again", async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    await other.queue({ name: 'a', type: 't' });
    await other.queue({ name: 'b', type: 't' });
    const { raw, claimer, counts, spy } = await claimerOn(world, {}, true);
    await eventually(() => spy.active === 1);
    expect(await claimer.claim([0])).toMatchObject({ key: ['a'] });
    const read = listings(counts);
    const b = await other.claim();
    expect(b?.key).toEqual(['b']);
    await other.complete(b!);
    await raw.exists('/');
    expect(claimer.listings.get(0)?.stale).toBe(true);
    expect(await claimer.claim([0])).toBeNull();
    expect(listings(counts)).toBeGreaterThan(read);
    await raw.close();
  });

  it('a foreign deletion of the entry an own completion has out is a change when that completion is refused', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    await other.queue({ name: 'a', type: 't' });
    const raw = await backend().connect();
    const spied = treeWatchSpy(raw);
    // The completion's multi waits until `other` has cancelled the task (deleting its entry)
    // and that deletion's event is in: reported while the own completion is out, it is taken
    // for the completion's own. The completion is then refused (the claim is void).
    let cancelFirst = false;
    const c = new Proxy(spied.coordinator, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'multi') return value;
        return async (...args: Parameters<Coordinator['multi']>) => {
          if (cancelFirst) {
            cancelFirst = false;
            await other.cancel(['a']);
            await raw.exists('/');
          }
          return target.multi(...args);
        };
      },
    });
    const engine = oneBucketEngine(c, world);
    const claimer = await engine.claimer({ worker: 'w', entryEvents: true });
    claimer.setWatched([0]);
    await eventually(() => spied.spy.active === 1);
    const a = await claimer.claim([0]);
    expect(a?.key).toEqual(['a']);
    cancelFirst = true;
    const outcome = await engine.complete(a!);
    expect(cancelFirst).toBe(false);
    expect(outcome.status).not.toBe('completed');
    // The listing may hide that deletion (and whatever came with it): it is read again.
    expect(claimer.listings.get(0)?.stale).toBe(true);
    await raw.close();
  });

  /**
   * A `'small'` claimer (lookahead 2: a watch at 1 entry or fewer, none from 4 entries) whose
   * empty bucket got its tree watch after its first listing, then five entries from `other`.
   */
  async function smallThenFive() {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    const on = await claimerOn(world, { entryEvents: 'small', lookahead: 2 }, true);
    // Not listed yet, so no watch: its size is unknown.
    expect(on.spy.calls).toBe(0);
    expect(await on.claimer.claim([0])).toBeNull();
    await eventually(() => on.spy.active === 1);
    for (const name of ['a', 'b', 'c', 'd', 'e']) await other.queue({ name, type: 't' });
    await on.raw.exists('/');
    return { ...on, other };
  }

  it("'small': a bucket has a tree watch while its listing is small, none once it holds 2 x lookahead entries", async () => {
    const { raw, claimer, spy } = await smallThenFive();
    // Five entries (listed by their events): the claim call drops the watch.
    expect(await claimer.claim([0])).toMatchObject({ key: ['a'] });
    expect(spy.active).toBe(0);
    expect(await claimer.claim([0])).toMatchObject({ key: ['b'] });
    expect(await claimer.claim([0])).toMatchObject({ key: ['c'] });
    expect(spy.active).toBe(0);
    // Down to one: watched again.
    expect(await claimer.claim([0])).toMatchObject({ key: ['d'] });
    await eventually(() => spy.active === 1);
    expect(spy.calls).toBe(2);
    await raw.close();
  });

  it("'small': once the tree watch is dropped, the bucket's children watch still fires", async () => {
    // The first listing set a children watch; the tree watch came after it. ZooKeeper before
    // 3.9 keeps one watch per session and path, so the server holds no children watch there
    // any more: the adapter fires it from the tree watch's events (zk-adapter, tree-watches.ts).
    const { raw, claimer, spy, other } = await smallThenFive();
    expect(await claimer.claim([0])).toMatchObject({ key: ['a'] });
    expect(spy.active).toBe(0);
    expect(await claimer.claim([0])).toMatchObject({ key: ['b'] });
    expect(claimer.listings.get(0)?.stale).toBe(false);
    await other.queue({ name: 'f', type: 't' });
    await raw.exists('/');
    expect(claimer.listings.get(0)?.stale).toBe(true);
    await raw.close();
  });

  for (const entryEvents of [true, false])
    it(`a child queued while its parent runs ${entryEvents ? 'is' : 'is not'} handed its parent's slot${entryEvents ? '' : ' without entry events'}`, async () => {
      const { world, other } = await oneBucketWorld(() => backend().connect());
      await other.queue({ name: 'p', type: 't' });
      await other.queue({ name: 'r0', type: 't' });
      const { raw, engine, claimer, ops } = await claimerOn(world, { entryEvents });
      const parent = await claimer.claim([0]);
      expect(parent?.key).toEqual(['p']);
      await eventually(() => claimer.listings.get(0)?.listing === null);
      // Queued after the listing the parent was claimed from: no listing here shows it.
      await other.queue({ name: 'c', type: 't', parent: { key: ['p'] }, priority: 10 });
      // A round trip of the claimer's own client: the creation's event is in by its reply.
      await raw.exists('/');
      if (entryEvents) await readIn(claimer, 'c');
      const { outcome, next } = await engine.completeHandingOff(
        parent!,
        'done',
        undefined,
        claimer,
      );
      expect(outcome.status).toBe('completed');
      if (entryEvents) {
        expect(next?.key).toEqual(['p', 'c']);
        expect(handsOff(ops.at(-1)!, 'p', 'p|c')).toBe(true);
        expect(await other.task(['p', 'c'])).toMatchObject({ state: 'working' });
      } else {
        expect(next).toBeNull();
        expect(await other.task(['p', 'c'])).toMatchObject({ state: 'pending' });
      }
      await raw.close();
    });

  for (const priority of [20, 10])
    it(`a root of priority ${priority} queued while the parent ran, not read yet: ${priority > 10 ? 'the hand-off waits for it (priority first)' : 'the read child of its priority is handed off'}`, async () => {
      const { world, other } = await oneBucketWorld(() => backend().connect());
      await other.queue({ name: 'p', type: 't', priority: 10 });
      await other.queue({ name: 'c', type: 't', parent: { key: ['p'] }, priority: 10 });
      const { raw, engine, claimer } = await claimerOn(world);
      const parent = await claimer.claim([0]);
      expect(parent?.key).toEqual(['p']);
      await readIn(claimer, 'c');
      // Known from its event alone: listed, not read.
      await other.queue({ name: 'r', type: 't', priority });
      await raw.exists('/');
      expect(listed(claimer)).toContain('r');
      const { next } = await engine.completeHandingOff(parent!, 'done', undefined, claimer);
      if (priority > 10) {
        expect(next).toBeNull();
        expect(await claimer.claim([0])).toMatchObject({ key: ['r'] });
      } else expect(next?.key).toEqual(['p', 'c']);
      await raw.close();
    });

  it('a parent known only from its event, then its child: the child is handed off (the view is complete up to the entries it read)', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    // A listing that offers plenty of work (2 lookaheads) is not re-read for a while (the
    // engine's clock stands still here): the parent is claimed from the events alone.
    for (let i = 0; i < 6; i++) await other.queue({ name: `r${i}`, type: 't' });
    const { raw, engine, claimer, ops } = await claimerOn(world, { lookahead: 2 });
    expect(await claimer.claim([0])).toMatchObject({ key: ['r0'] });
    await eventually(() => claimer.listings.get(0)?.listing === null);
    const reads = claimer.readRequests;
    const parent = await parentThenChild(other, raw, claimer);
    const { next } = await engine.completeHandingOff(parent, 'done', undefined, claimer);
    expect(next?.key).toEqual(['p', 'c']);
    expect(handsOff(ops.at(-1)!, 'p', 'p|c')).toBe(true);
    // No listing was read for either: two entry reads, the parent's and the child's.
    expect(claimer.readRequests - reads).toBe(2);
    await raw.close();
  });

  it('after a reset, entries reported before the next listing vouch for nothing: no hand-off on them', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    for (let i = 0; i < 6; i++) await other.queue({ name: `r${i}`, type: 't' });
    const { raw, engine, claimer, spy } = await claimerOn(world, { lookahead: 2 }, true);
    expect(await claimer.claim([0])).toMatchObject({ key: ['r0'] });
    await eventually(() => claimer.listings.get(0)?.listing === null);
    // Events may be lost while the connection is down: the listing read before is no base.
    await backend().dropConnection(raw);
    await eventually(() => spy.resets === 1);
    const parent = await parentThenChild(other, raw, claimer);
    // The parent's node changed after the listing's pzxid, and nothing vouches for the view
    // since: the child waits for a listing instead of being handed off.
    const { next } = await engine.completeHandingOff(parent, 'done', undefined, claimer);
    expect(next).toBeNull();
    expect(await other.task(['p', 'c'])).toMatchObject({ state: 'pending' });
    await raw.close();
  });

  it('a reset makes a covered listing stale: a change in the gap is read, not missed', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    await other.queue({ name: 'a', type: 't' });
    const { raw, claimer, spy } = await claimerOn(world, {}, true);
    await eventually(() => spy.active === 1);
    expect(await claimer.claim([0])).toMatchObject({ key: ['a'] });
    await eventually(() => claimer.listings.get(0)?.listing === null);
    expect(claimer.listings.get(0)?.stale).toBe(false);
    await backend().dropConnection(raw);
    await eventually(() => spy.resets === 1);
    // No children watch stands in for the missed events: the listing must be read again.
    expect(claimer.listings.get(0)?.stale).toBe(true);
    await raw.close();
  });

  it('a new entry takes its place in the listing in claim order, before any re-read', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    await other.queue({ name: 'a', type: 't' });
    await other.queue({ name: 'b', type: 't', priority: 5 });
    const { raw, claimer } = await claimerOn(world);
    expect(await claimer.claim([0])).toMatchObject({ key: ['b'] });
    await eventually(() => claimer.listings.get(0)?.listing === null);
    await other.queue({ name: 'hi', type: 't', priority: 9 });
    await other.queue({ name: 'z', type: 't' });
    await other.queue({ name: 'mid', type: 't', priority: 5 });
    await raw.exists('/');
    // Only the events put them there: no listing was read since the claim.
    expect(listed(claimer)).toEqual(['hi', 'mid', 'a', 'z']);
    await raw.close();
  });

  it('one tree watch per watched bucket; a bucket no longer watched loses its watch', async () => {
    const { world } = await oneBucketWorld(() => backend().connect());
    const { raw, claimer, spy } = await claimerOn(world, {}, true);
    await eventually(() => spy.active === 1);
    claimer.setWatched([0]);
    expect(spy.calls).toBe(1);
    claimer.setWatched([]);
    expect(spy.active).toBe(0);
    claimer.setWatched([0]);
    await eventually(() => spy.active === 1);
    claimer.close();
    expect(spy.active).toBe(0);
    await raw.close();
  });

  it("'children': no tree watch for flat work; the first claim of a task with listed children turns them on", async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    await other.queue({ name: 'a', type: 't' });
    await other.queue({ name: 'b', type: 't' });
    const { raw, claimer, spy } = await claimerOn(world, { entryEvents: 'children' }, true);
    expect(await claimer.claim([0])).toMatchObject({ key: ['a'] });
    expect(await claimer.claim([0])).toMatchObject({ key: ['b'] });
    expect(spy.calls).toBe(0);
    await other.queue({ name: 'p', type: 't' });
    await other.queue({ name: 'c', type: 't', parent: { key: ['p'] } });
    await raw.exists('/');
    expect(await claimer.claim([0])).toMatchObject({ key: ['p'] });
    await eventually(() => spy.active === 1);
    expect(spy.calls).toBe(1);
    await raw.close();
  });

  for (const mode of ['absent', 'unimplemented'] as const)
    it(`a coordinator ${mode === 'absent' ? 'without tree watches' : 'whose server lacks them'}: claims go on from listings, with no retries`, async () => {
      const { world, other } = await oneBucketWorld(() => backend().connect());
      await other.queue({ name: 'a', type: 't' });
      const raw = await backend().connect();
      const { coordinator, spy } = treeWatchSpy(raw, mode);
      const engine = oneBucketEngine(coordinator, world);
      const claimer = await engine.claimer({ worker: 'w', entryEvents: true });
      claimer.setWatched([0]);
      expect(await claimer.claim([0])).toMatchObject({ key: ['a'] });
      await other.queue({ name: 'b', type: 't' });
      // The children watch's event is in by the reply of a later request of this client.
      await raw.exists('/');
      expect(await claimer.claim([0])).toMatchObject({ key: ['b'] });
      claimer.setWatched([0]);
      expect(spy.calls).toBe(mode === 'absent' ? 0 : 1);
      await raw.close();
    });
});

describeOnBackends('worker: a child queued while its parent runs', (backend) => {
  it('runs in the slot its parent leaves, claimed by the completion', async () => {
    // A first tree, listed whole: claiming its parent turns the worker's tree watches on.
    const { world, other, raw } = await treeWorld(() => backend().connect());
    const { c, ops } = counting(raw);
    const ran: string[] = [];
    let started = () => {};
    const parentStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    let release = () => {};
    const queued = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handle = runWorker(
      c,
      {
        parent: async (task) => {
          ran.push(task.key.join('|'));
          started();
          await queued;
          // The child's creation event is in once a later reply of this client is.
          await raw.exists('/');
        },
        t: (task) => void ran.push(task.key.join('|')),
      },
      { world, id: 'w1', concurrency: 1, logger: memoryLogger(), entryEvents: 'children' },
    );
    await eventually(async () => (await other.counts()).completed === 2);
    await other.queue({ name: 'p', type: 'parent' });
    await parentStarted;
    await other.queue({ name: 'c', type: 't', parent: { key: ['p'] }, priority: 10 });
    release();
    await eventually(async () => (await other.counts()).completed === 4);
    await handle.stop();
    expect(ran).toEqual(['t', 't|l', 'p', 'p|c']);
    expect(ops.some((o) => handsOff(o, 'p', 'p|c'))).toBe(true);
    await raw.close();
  });
});

describeOnBackends("worker: tree watches on small buckets by default ('small')", (backend) => {
  for (const entryEvents of [undefined, false] as const)
    it(`a worker ${entryEvents === undefined ? 'by default watches its small bucket' : 'with entryEvents false sets no tree watch'}`, async () => {
      const { world, other, raw } = await treeWorld(() => backend().connect());
      const { coordinator, spy } = treeWatchSpy(raw);
      const handle = runWorker(
        coordinator,
        { t: () => {} },
        { world, logger: memoryLogger(), ...(entryEvents === false ? { entryEvents } : {}) },
      );
      await eventually(async () => (await other.counts()).completed === 2);
      if (entryEvents === undefined) await eventually(() => spy.active === 1);
      await handle.stop();
      expect(spy.calls).toBe(entryEvents === undefined ? 1 : 0);
      await raw.close();
    });
});
