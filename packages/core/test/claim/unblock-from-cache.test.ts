import { type Coordinator, createEngine, type Engine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  counting,
  eventually,
  intercept,
  memoryLogger,
  oneBucketEngine,
  oneBucketWorld,
  parentAndChild,
  TestClock,
} from '../engine/helpers.js';

/** More roots than "plenty of work": the claimer serves its cached listing between changes. */
const ROOTS = 40;

describeOnBackends(
  'engine: a child of a task completed here, from the cached listing',
  (backend) => {
    /**
     * p, its priority-10 child p/c and ROOTS roots in one bucket, queued by another client's
     * engine (`other`); `engine` (counted) has claimed p. With `readAhead`, one more claim call
     * ran while p was held: the child's entry and p's tree node were read then.
     */
    async function parentHeld(readAhead: boolean) {
      const { world, other } = await parentAndChild(() => backend().connect(), ROOTS);
      const raw = await backend().connect();
      const { c, counts, ops } = counting(raw);
      const engine = oneBucketEngine(c, world);
      const parent = await engine.claim();
      expect(parent?.key).toEqual(['p']);
      if (readAhead) expect((await engine.claim())?.key).toEqual(['r0']);
      return { other, engine, parent: parent!, counts, ops, raw };
    }

    /** The next claim does not take the child, which stays pending behind its queued parent. */
    async function heldBack(engine: Engine, other: Engine): Promise<void> {
      expect((await engine.claim())?.key).not.toEqual(['p', 'c']);
      expect(await other.task(['p', 'c'])).toMatchObject({ state: 'pending' });
      expect(await other.task(['p'])).toMatchObject({ state: 'pending' });
    }

    for (const readAhead of [false, true])
      it(`the child is claimed next without reading its bucket again${readAhead ? ', its reads done while the parent ran' : ''}`, async () => {
        const { engine, parent, counts, ops, raw } = await parentHeld(readAhead);
        expect((await engine.complete(parent, 'done')).status).toBe('completed');
        const listingsBefore = counts.byMethod.childrenWithStat ?? 0;
        const readsBefore = counts.reads;
        expect((await engine.claim())?.key).toEqual(['p', 'c']);
        expect(counts.byMethod.childrenWithStat ?? 0).toBe(listingsBefore);
        // Read ahead, the claim is the only request: its multi checks the parent's tree node.
        if (readAhead) expect(counts.reads).toBe(readsBefore);
        expect(ops.at(-1)?.filter((op) => op.op === 'check')).toHaveLength(1);
        await raw.close();
      });

    it('a listing read before the parent completed and answered after: the parent no longer blocks the child', async () => {
      const { world, other } = await parentAndChild(() => backend().connect(), ROOTS);
      const raw = await backend().connect();
      // While `held` is set, the next listing's reply (read by the server at once) is kept from
      // the engine until `release` is called.
      let held: { read: () => void; release: Promise<void> } | null = null;
      const c = intercept(raw, 'childrenWithStat', (list) => async (...args) => {
        const out = await list(...args);
        const h = held;
        held = null;
        if (h) {
          h.read();
          await h.release;
        }
        return out;
      });
      const clock = new TestClock();
      const engine = createEngine(c, { world, buckets: 1, clock, logger: memoryLogger() });
      const parent = await engine.claim();
      expect(parent?.key).toEqual(['p']);
      let release = () => {};
      const read = new Promise<void>((resolve) => {
        held = {
          read: resolve,
          release: new Promise<void>((r) => {
            release = r;
          }),
        };
      });
      // Something changes and the listing is old enough: the next claim reads the bucket in the
      // background and claims from its cached listing meanwhile.
      await other.queue({ name: 'noise', type: 'other' });
      // Answered after the change's event on this connection: the engine has heard of it.
      await raw.exists('/');
      clock.advance(60_000);
      expect((await engine.claim())?.key).toEqual(['r0']);
      await read;
      expect((await engine.complete(parent!, 'done')).status).toBe('completed');
      release();
      // The engine takes the reply in (no request left in it) before the next claim chooses.
      await new Promise((resolve) => setImmediate(resolve));
      // That listing, read before the completion, still shows p: it is left out.
      expect((await engine.claim())?.key).toEqual(['p', 'c']);
      await raw.close();
    });

    it('the child is claimed without waiting for the reads of lower-priority entries listed since', async () => {
      const { world, other } = await parentAndChild(() => backend().connect(), 0);
      const raw = await backend().connect();
      // Reads of the late roots' entries are never answered; every other read is, and noted.
      const asked: string[] = [];
      const answered: string[] = [];
      const c = new Proxy(raw, {
        get(target, prop) {
          const value = Reflect.get(target, prop);
          if (prop !== 'get' && prop !== 'exists')
            return typeof value === 'function' ? value.bind(target) : value;
          return async (path: string) => {
            asked.push(path);
            if (path.includes('-late')) return new Promise(() => {});
            const out = await (prop === 'get' ? target.get(path) : target.exists(path));
            answered.push(path);
            return out;
          };
        },
      });
      const engine = oneBucketEngine(c, world);
      const parent = await engine.claim();
      expect(parent?.key).toEqual(['p']);
      for (let i = 0; i < 3; i++) await other.queue({ name: `late${i}`, type: 't' });
      // Answered after the queues' events on this connection: the engine has heard of them.
      await raw.exists('/');
      // This claim never returns: the child waits on p, and it waits for the roots' reads. On
      // its way the child's entry and p's tree node are read ahead, and the bucket again.
      void engine.claim();
      await eventually(
        () =>
          asked.some((p) => p.includes('-late')) &&
          answered.some((p) => p.includes('-p|c-')) &&
          answered.includes(`/zoott_${world}/p`),
      );
      expect((await engine.complete(parent!, 'done')).status).toBe('completed');
      // Room for more than the child: a claim that waited for the roots' reads, to fill it,
      // would never return.
      const claimed = engine.claimMany(4);
      const stuck = new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 10_000));
      const got = await Promise.race([claimed.then((cl) => cl.map((x) => x.key)), stuck]);
      expect(got).toEqual([['p', 'c']]);
      await raw.close();
    });

    // Read ahead, only the claim's check can see the re-queue; without, the tree node read at
    // the claim changed after the listing.
    for (const [readAhead, title] of [
      [
        true,
        'the parent queued again by another client before the claim, its tree node read before that: the claim is refused',
      ],
      [
        false,
        'the parent queued again by another client before its tree node was read: the child is not taken',
      ],
    ] as const)
      it(title, async () => {
        const { engine, other, parent, raw } = await parentHeld(readAhead);
        expect((await engine.complete(parent, 'done')).status).toBe('completed');
        await other.queue({ name: 'p', type: 't', data: 'again' });
        await heldBack(engine, other);
        await raw.close();
      });
  },
);

describeOnBackends('engine: an entry completed here is not read again', (backend) => {
  // A listing read after the claim still shows the claimed entry; its completion deletes it.
  // Reading it then finds nothing: a wasted request per task, in a drain nearly one in two.
  for (const when of ['answered before the completion', 'answered after the completion'])
    it(`a listing ${when}`, async () => {
      const { world, other } = await oneBucketWorld(() => backend().connect());
      for (let i = 0; i < ROOTS; i++) await other.queue({ name: `r${i}`, type: 't' });
      const raw = await backend().connect();
      const reads: string[] = [];
      let listings = 0;
      let hold: Promise<void> | null = null;
      const c = new Proxy(raw, {
        get(target, prop) {
          const value = Reflect.get(target, prop);
          if (prop === 'get')
            return (...args: Parameters<Coordinator['get']>) => {
              reads.push(args[0]);
              return target.get(...args);
            };
          if (prop === 'childrenWithStat')
            return async (...args: Parameters<Coordinator['childrenWithStat']>) => {
              const out = await target.childrenWithStat(...args);
              listings++;
              if (hold) await hold;
              return out;
            };
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const clock = new TestClock();
      const engine = createEngine(c, { world, buckets: 1, clock, logger: memoryLogger() });
      const first = await engine.claim();
      expect(first?.key).toEqual(['r0']);
      let release = () => {};
      if (when.includes('after'))
        hold = new Promise<void>((resolve) => {
          release = resolve;
        });
      // A change, and the listing old enough: the next claim reads the bucket again, in the
      // background, while it claims from its cached listing.
      const seen = listings;
      await other.queue({ name: 'noise', type: 'other' });
      await raw.exists('/');
      clock.advance(60_000);
      expect((await engine.claim())?.key).toEqual(['r1']);
      await eventually(() => listings > seen);
      expect((await engine.complete(first!, 'done')).status).toBe('completed');
      release();
      await new Promise((resolve) => setImmediate(resolve));
      reads.length = 0;
      expect((await engine.claimMany(20)).map((cl) => cl.key[0])).not.toContain('r0');
      expect(reads.filter((p) => p.includes('-r0-'))).toEqual([]);
      await raw.close();
    });
});
