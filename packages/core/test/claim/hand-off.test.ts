import {
  type Claim,
  type Claimer,
  type ClaimerOptions,
  type Coordinator,
  createEngine,
  runWorker,
} from '@zoott/core';
import { describeOnBackends, losingReplies } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  counting,
  eventually,
  handsOff,
  memoryLogger,
  oneBucketEngine,
  oneBucketWorld,
  parentAndChild,
  TestClock,
} from '../engine/helpers.js';

/** Roots queued after the child: a claim in claim order takes the priority-10 child first. */
const ROOTS = 3;

describeOnBackends(
  'engine: a completion hands its child the slot (claimed in the same multi)',
  (backend) => {
    /**
     * p, its priority-10 child p/c and ROOTS roots, queued by `other`; `claimer` (a worker's
     * own, on a counted client) has claimed p, and its read-ahead of the child is in.
     */
    async function parentRunning(connect: () => Promise<Coordinator> = () => backend().connect()) {
      const { world, other } = await parentAndChild(() => backend().connect(), ROOTS);
      const raw = await connect();
      const { c, ops } = counting(raw);
      const engine = oneBucketEngine(c, world);
      const claimer = await engine.claimer({ worker: 'w' });
      claimer.setWatched([0]);
      const parent = await claimer.claim([0]);
      expect(parent?.key).toEqual(['p']);
      await readAhead(claimer, 'c');
      return { world, other, raw, engine, claimer, parent: parent!, ops };
    }

    /** Waits until `claimer` has read the entry of the task named `name` (its read-ahead). */
    async function readAhead(claimer: Claimer, name: string): Promise<void> {
      await eventually(() => {
        const st = claimer.listings.get(0);
        if (!st || st.readingAhead.size > 0) return false;
        return [...st.cache.values()].some((e) => e.data.name === name);
      });
    }

    /** A worker's claimer (`options`) on `world`, through a client of its own, watching bucket 0. */
    async function claimerOn(world: string, options: Partial<ClaimerOptions> = {}) {
      const raw = await backend().connect();
      const engine = oneBucketEngine(raw, world);
      const claimer = await engine.claimer({ worker: 'w', ...options });
      claimer.setWatched([0]);
      /** Completes `claim` through `claimer`, which may hand a child off. */
      const complete = (claim: Claim) =>
        engine.completeHandingOff(claim, 'done', undefined, claimer);
      return { raw, engine, claimer, complete };
    }

    it('the child is claimed in its parent completion multi: no claim transaction of its own', async () => {
      const { engine, claimer, parent, ops, raw } = await parentRunning();
      const before = ops.length;
      const { outcome, next } = await engine.completeHandingOff(parent, 'done', undefined, claimer);
      expect(outcome.status).toBe('completed');
      expect(next?.key).toEqual(['p', 'c']);
      expect(next?.attempt).toBe(1);
      // One multi did both.
      expect(ops.length - before).toBe(1);
      expect(handsOff(ops.at(-1)!, 'p', 'p|c')).toBe(true);
      expect(await engine.task(['p', 'c'])).toMatchObject({ state: 'working' });
      // The claim is an ordinary one: it completes, and the roots come next.
      expect((await engine.complete(next!, 'ok')).status).toBe('completed');
      expect((await claimer.claim([0]))?.key).toEqual(['r0']);
      await raw.close();
    });

    it('engine.complete without a claimer hands nothing off', async () => {
      const { engine, parent, ops, raw } = await parentRunning();
      expect((await engine.complete(parent, 'done')).status).toBe('completed');
      expect(handsOff(ops.at(-1)!, 'p', 'p|c')).toBe(false);
      expect(await engine.task(['p', 'c'])).toMatchObject({ state: 'pending' });
      await raw.close();
    });

    it('a child cancelled while its parent ran: the parent still completes, nothing runs in its place', async () => {
      const { other, engine, claimer, parent, raw } = await parentRunning();
      await other.cancel(['p', 'c']);
      const { outcome, next } = await engine.completeHandingOff(parent, 'done', undefined, claimer);
      expect(outcome.status).toBe('completed');
      expect(next).toBeNull();
      expect(await other.task(['p'])).toMatchObject({ state: 'completed', result: 'done' });
      expect(await other.task(['p', 'c'])).toBeNull();
      expect((await claimer.claim([0]))?.key).toEqual(['r0']);
      await raw.close();
    });

    it('a completion that throws before its multi goes out gives the hand-off back: the child is claimed next, the usual way', async () => {
      const { engine, claimer, parent, raw } = await parentRunning();
      // A report that is not JSON makes the completion throw while its record is written,
      // after the child was held for the hand-off and before any multi carries it.
      const report = { attempt: 1, worker: 'w', updatedAt: 0, progress: 1n, log: [], dropped: 0 };
      await expect(
        engine.completeHandingOff(parent, 'done', { report }, claimer),
      ).rejects.toMatchObject({ code: 'INVALID_TASK', message: /report is not JSON/ });
      expect(await engine.task(['p'])).toMatchObject({ state: 'working' });
      expect((await engine.complete(parent, 'done')).status).toBe('completed');
      // Not held any more: the priority-10 child comes before the roots.
      expect((await claimer.claim([0]))?.key).toEqual(['p', 'c']);
      await raw.close();
    });

    it('a child queued again while its parent ran: the parent completes, the child runs once, with its new data', async () => {
      const { other, engine, claimer, parent, raw } = await parentRunning();
      await other.queue({
        name: 'c',
        type: 't',
        parent: { key: ['p'] },
        priority: 10,
        data: 'again',
      });
      const { outcome, next } = await engine.completeHandingOff(parent, 'done', undefined, claimer);
      expect(outcome.status).toBe('completed');
      // Either handed off with the new entry (the listing caught up in time) or claimed next,
      // before the roots: a claim that tries the old entry is refused, and the listing is read
      // again before a lower-priority root may be claimed (order.test.ts).
      const child = next ?? (await claimer.claim([0]));
      expect(child?.key).toEqual(['p', 'c']);
      if (child === null) throw new Error('no child');
      expect(child.data).toBe('again');
      expect(child.attempt).toBe(1);
      expect((await engine.complete(child, 'ok')).status).toBe('completed');
      expect(await other.task(['p', 'c'])).toMatchObject({ state: 'completed', result: 'ok' });
      expect(await other.counts()).toMatchObject({ working: 0 });
      await raw.close();
    });

    for (const spare of [0, 1])
      it(
        spare === 0
          ? 'a runnable task of the same priority queued before the child goes first: no hand-off'
          : 'with a free slot besides the parent one for the task that comes first, the child is handed off',
        async () => {
          const { world, other } = await oneBucketWorld(() => backend().connect());
          // p is claimed first (priority 30); `early` (priority 10) was queued before p's child.
          await other.queue({ name: 'p', type: 't', priority: 30 });
          await other.queue({ name: 'early', type: 't', priority: 10 });
          await other.queue({ name: 'c', type: 't', parent: { key: ['p'] }, priority: 10 });
          const { raw, claimer, complete } = await claimerOn(world, { spareSlots: () => spare });
          const parent = await claimer.claim([0]);
          expect(parent?.key).toEqual(['p']);
          await readAhead(claimer, 'c');
          await readAhead(claimer, 'early');
          const done = await complete(parent!);
          expect(done.outcome.status).toBe('completed');
          if (spare === 0) {
            expect(done.next).toBeNull();
            expect((await claimer.claim([0]))?.key).toEqual(['early']);
            expect((await claimer.claim([0]))?.key).toEqual(['p', 'c']);
          } else {
            // `early` keeps its place: the free slot is there for it.
            expect(done.next?.key).toEqual(['p', 'c']);
            expect((await claimer.claim([0]))?.key).toEqual(['early']);
          }
          await raw.close();
        },
      );

    /** A world of p (type a), its child p/c (type b, priority 10) and a root r (type a). */
    async function typedWorld() {
      const { world, other } = await oneBucketWorld(() => backend().connect());
      await other.queue({ name: 'p', type: 'a' });
      await other.queue({ name: 'c', type: 'b', parent: { key: ['p'] }, priority: 10 });
      await other.queue({ name: 'r', type: 'a' });
      return { world, other };
    }

    /** A rate gate with `left` starts of type b (type a is free), counting what it gives out. */
    function gateOf(left: number) {
      const gate = {
        left,
        open: (type: string) => type !== 'b' || gate.left > 0,
        take: (type: string) => {
          if (type !== 'b') return true;
          if (gate.left === 0) return false;
          gate.left--;
          return true;
        },
        refund: (type: string) => {
          if (type === 'b') gate.left++;
        },
        nextAt: () => Number.POSITIVE_INFINITY,
      };
      return gate;
    }

    for (const [left, cancel, title] of [
      [0, false, 'a child whose type has no start left under its rate limit is not handed off'],
      [1, false, 'a hand-off takes one start of its type from the rate limit'],
      [1, true, 'a refused hand-off gives its start back to the rate limit'],
    ] as const)
      it(title, async () => {
        const { world, other } = await typedWorld();
        const gate = gateOf(left);
        const { raw, claimer, complete } = await claimerOn(world, { gate });
        const parent = await claimer.claim([0]);
        expect(parent?.key).toEqual(['p']);
        await readAhead(claimer, 'c');
        if (cancel) await other.cancel(['p', 'c']);
        const { outcome, next } = await complete(parent!);
        expect(outcome.status).toBe('completed');
        expect(next?.key ?? null).toEqual(left === 1 && !cancel ? ['p', 'c'] : null);
        expect(gate.left).toBe(left === 1 && !cancel ? 0 : left);
        await raw.close();
      });

    it('an ancestor queued again while the parent ran: the child is not handed off, it waits for that ancestor', async () => {
      const { world, other } = await oneBucketWorld(() => backend().connect());
      await other.queue({ name: 'g', type: 't' });
      await other.queue({ name: 'p', type: 't', parent: { key: ['g'] } });
      await other.queue({ name: 'c', type: 't', parent: { key: ['g', 'p'] } });
      const { raw, engine, claimer, complete } = await claimerOn(world);
      const g = await claimer.claim([0]);
      expect(g?.key).toEqual(['g']);
      expect((await engine.complete(g!, 'done')).status).toBe('completed');
      const parent = await claimer.claim([0]);
      expect(parent?.key).toEqual(['g', 'p']);
      await readAhead(claimer, 'c');
      // g, completed, is queued again: its entry blocks every task under it once more.
      await other.queue({ name: 'g', type: 't', data: 'again' });
      const { outcome, next } = await complete(parent!);
      expect(outcome.status).toBe('completed');
      expect(next).toBeNull();
      expect(await other.task(['g', 'p', 'c'])).toMatchObject({ state: 'pending' });
      expect((await claimer.claim([0]))?.key).toEqual(['g']);
      await raw.close();
    });

    it('a grandchild whose own parent is still pending is not handed off; that parent is', async () => {
      const { world, other } = await oneBucketWorld(() => backend().connect());
      await other.queue({ name: 'p', type: 't' });
      await other.queue({ name: 'c', type: 't', parent: { key: ['p'] } });
      await other.queue({ name: 'g', type: 't', parent: { key: ['p', 'c'] }, priority: 20 });
      const { raw, claimer, complete } = await claimerOn(world);
      const parent = await claimer.claim([0]);
      expect(parent?.key).toEqual(['p']);
      await readAhead(claimer, 'c');
      const { next } = await complete(parent!);
      expect(next?.key).toEqual(['p', 'c']);
      expect(await other.task(['p', 'c', 'g'])).toMatchObject({ state: 'pending' });
      await raw.close();
    });

    for (const fault of ['before', 'after'] as const)
      it(`a completion carrying a hand-off whose reply is lost ${fault} reaching the server: parent completed once, child run once`, async () => {
        let arm = (_: 'before' | 'after') => {};
        const { other, engine, claimer, parent, raw } = await parentRunning(async () => {
          const lossy = losingReplies(await backend().connect());
          arm = (loss) => lossy.lose(loss, { when: (ops) => handsOff(ops, 'p', 'p|c') });
          return lossy.c;
        });
        arm(fault);
        const { outcome, next } = await engine.completeHandingOff(
          parent,
          'done',
          undefined,
          claimer,
        );
        expect(outcome.status).toBe('completed');
        // Applied: the child's claim is adopted. Not applied: the parent completes alone.
        if (fault === 'after') expect(next?.key).toEqual(['p', 'c']);
        else expect(next).toBeNull();
        const child: Claim | null = next ?? (await claimer.claim([0]));
        expect(child?.key).toEqual(['p', 'c']);
        expect(child?.attempt).toBe(1);
        expect((await engine.complete(child!, 'ok')).status).toBe('completed');
        expect(await other.counts()).toMatchObject({ working: 0, completed: 2, pending: ROOTS });
        await raw.close();
      });
  },
);

describeOnBackends('worker: a child runs in the slot its parent leaves', (backend) => {
  it('a worker hands a child its parent slot; each task runs once, the child before the roots', async () => {
    const { world, other } = await parentAndChild(() => backend().connect(), ROOTS);
    const raw = await backend().connect();
    const { c, ops } = counting(raw);
    const ran: string[] = [];
    const handle = runWorker(
      c,
      { t: (task) => void ran.push(task.key.join('|')) },
      { world, id: 'w1', concurrency: 1, logger: memoryLogger() },
    );
    await eventually(async () => (await other.counts()).completed === ROOTS + 2);
    await handle.stop();
    expect(ran).toEqual(['p', 'p|c', ...Array.from({ length: ROOTS }, (_, i) => `r${i}`)]);
    expect(ops.some((o) => handsOff(o, 'p', 'p|c'))).toBe(true);
    expect(handle.stats).toMatchObject({ claimed: ROOTS + 2, completed: ROOTS + 2 });
    await raw.close();
  });
});

describeOnBackends('records of a hand-off agree with the order it ran in', (backend) => {
  it("the child's startedAt is no earlier than its parent's completedAt", async () => {
    const { world } = await parentAndChild(() => backend().connect(), ROOTS);
    const raw = await backend().connect();
    // Every reading of this clock is a millisecond after the one before: two readings taken
    // for the two stamps would disagree, as a real clock does between them.
    const clock = new TestClock();
    const now = clock.now.bind(clock);
    clock.now = () => {
      clock.advance(1);
      return now();
    };
    const engine = createEngine(raw, { world, buckets: 1, clock, logger: memoryLogger() });
    const claimer = await engine.claimer({ worker: 'w' });
    claimer.setWatched([0]);
    const parent = await claimer.claim([0]);
    expect(parent?.key).toEqual(['p']);
    await eventually(() => {
      const st = claimer.listings.get(0);
      return (
        !!st &&
        st.readingAhead.size === 0 &&
        [...st.cache.values()].some((e) => e.data.name === 'c')
      );
    });
    const { next } = await engine.completeHandingOff(parent!, 'done', undefined, claimer);
    expect(next?.key).toEqual(['p', 'c']);
    const parentRecord = await engine.task(['p']);
    const childRecord = await engine.task(['p', 'c']);
    expect(childRecord?.startedAt).toBe(next!.startedAt);
    expect(childRecord!.startedAt!).toBeGreaterThanOrEqual(parentRecord!.completedAt!);
    await engine.complete(next!, 'ok');
    await raw.close();
  });
});
