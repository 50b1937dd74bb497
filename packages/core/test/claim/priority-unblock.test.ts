import { type Coordinator, createEngine, type Engine, runWorker } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  counting,
  eventually,
  handsOff,
  intercept,
  memoryLogger,
  TestClock,
  withoutTreeWatches,
  worldName,
} from '../engine/helpers.js';

/**
 * More roots than a listing needs to count as "plenty of work" (2 x the lookahead of 16): a
 * listing that holds them is served from its cache for `relistMs` after a change.
 */
const ROOTS = 40;

/**
 * A fresh world of one bucket (parent, child and every root share one listing), initialised,
 * holding `p`, its child `c` of `priority` (unless `withChild` is false), then ROOTS
 * priority-0 roots queued after them.
 */
async function childAndRoots(
  c: Coordinator,
  priority: number,
  clock?: TestClock,
  withChild = true,
): Promise<{ world: string; engine: Engine }> {
  const world = worldName();
  const engine = createEngine(c, {
    world,
    buckets: 1,
    logger: memoryLogger(),
    ...(clock === undefined ? {} : { clock }),
  });
  await engine.init();
  await engine.queue({ name: 'p', type: 't' });
  if (withChild) await engine.queue({ name: 'c', type: 't', parent: { key: ['p'] }, priority });
  for (let i = 0; i < ROOTS; i++) await engine.queue({ name: `r${i}`, type: 't' });
  return { world, engine };
}

/** A promise the roots' handlers wait on, and the function that lets them finish. */
function gated(): { gate: Promise<void>; release: () => void } {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { gate, release };
}

describeOnBackends('engine: priority from the moment a task is runnable', (backend) => {
  // Equal priority too: the child was queued before the roots, so FIFO puts it first.
  for (const priority of [10, 0]) {
    it(`a priority-${priority} child whose parent completes is the next task claimed, before ${ROOTS} priority-0 roots queued after it`, async () => {
      const producer = await backend().connect();
      const { world } = await childAndRoots(producer, priority);
      // Time stands still: the cached listing never ages past `relistMs`, so only the rule
      // (not a re-read that happens to come) can put the child first.
      const clock = new TestClock();
      const started: string[] = [];
      const wc = await backend().connect();
      const worker = runWorker(
        wc,
        {
          t: (task) => {
            started.push(task.key.join('/'));
          },
        },
        { world, concurrency: 1, clock, logger: memoryLogger(), pollMs: 200 },
      );
      await eventually(() => worker.stats.completed >= 3);
      await worker.stop();
      expect(started.slice(0, 3)).toEqual(['p', 'p/c', 'r0']);
      await Promise.all([producer.close(), wc.close()]);
    });
  }

  it('a worker whose slots are nearly all busy claims the just-unblocked child at once, not after a batch of slots frees up', async () => {
    const producer = await backend().connect();
    const { world } = await childAndRoots(producer, 10);
    // The roots hold their slots until the end: after the parent completes one slot is free,
    // below the quarter (2 of 8) a worker otherwise waits for before it claims again.
    const { gate, release } = gated();
    const started: string[] = [];
    const wc = await backend().connect();
    const worker = runWorker(
      wc,
      {
        t: async (task) => {
          started.push(task.key.join('/'));
          // Only p ends: a child that ended too would free its slot for a ninth root.
          if (task.key.length > 1 || task.key[0] !== 'p') await gate;
        },
      },
      { world, concurrency: 8, clock: new TestClock(), logger: memoryLogger(), pollMs: 200 },
    );
    await eventually(() => started.includes('p/c'));
    expect(started).toHaveLength(9);
    expect(started[0]).toBe('p');
    expect(started[8]).toBe('p/c');
    release();
    await worker.stop();
    await Promise.all([producer.close(), wc.close()]);
  });

  it("a worker with one slot free besides its completed parent's claims the parent's second child at once, though it ranks no higher than what runs", async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 1, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'p', type: 't' });
    for (const name of ['c1', 'c2'])
      await engine.queue({ name, type: 't', parent: { key: ['p'] } });
    // With p, 7 of the 8 slots are taken: one free, below the quarter (2) a worker otherwise
    // waits for before it claims again. Every task but p holds its slot until the end.
    for (let i = 0; i < 6; i++) await engine.queue({ name: `r${i}`, type: 't' });
    const { gate, release } = gated();
    const started: string[] = [];
    const { c: wc, ops } = counting(await backend().connect());
    const worker = runWorker(
      wc,
      {
        t: async (task) => {
          started.push(task.key.join('/'));
          if (task.key.join('/') !== 'p') await gate;
        },
      },
      { world, concurrency: 8, clock: new TestClock(), logger: memoryLogger(), pollMs: 200 },
    );
    // p's completion hands its slot to c1; c2, runnable with it and of the same priority as
    // every task running, takes the one free slot at once.
    await eventually(() => started.includes('p/c2'));
    expect(ops.some((o) => handsOff(o, 'p', 'p|c1'))).toBe(true);
    expect(started).toHaveLength(9);
    release();
    await worker.stop();
    await Promise.all([producer.close(), wc.close()]);
  });

  it('in a busy bucket, where a change lands while every read is out, a child queued while its parent ran still goes before the roots', async () => {
    const producer = await backend().connect();
    // The child is queued by its parent's handler: no listing the worker read before shows
    // it, so the bucket must be read again, and every read is behind.
    const { world, engine } = await childAndRoots(producer, 10, undefined, false);
    // The worker's listings of the bucket: while `busyReads` lasts, another producer queues
    // a task (of a type nobody runs) during each, and the change event reaches the worker
    // before the reply (a later read on its connection is answered after the event).
    const raw = await backend().connect();
    const bucket = `/zoott_p/${world}/0000`;
    let busyReads = 0;
    let busy = 0;
    const wc = intercept(raw, 'childrenWithStat', (list) => async (...args) => {
      const out = await list(...args);
      if (args[0] === bucket && busyReads > 0) {
        busyReads--;
        await engine.queue({ name: `busy${busy++}`, type: 'other' });
        await raw.children(bucket);
      }
      return out;
    });
    const { gate, release } = gated();
    const started: string[] = [];
    // Without tree watches: a tree event would name the child at once, and no listing would
    // have to be read for it (entry-events.test.ts), which is what this test is about.
    const workerCoordinator = withoutTreeWatches(wc);
    // The handler queues through its worker's engine, so that engine's completion of p
    // knows a child of p was queued (a note kept per engine).
    const workerEngine = createEngine(workerCoordinator, {
      world,
      clock: new TestClock(),
      logger: memoryLogger(),
    });
    const worker = runWorker(
      workerCoordinator,
      {
        t: async (task) => {
          started.push(task.key.join('/'));
          // Every read from now on has a change land while it is out: the listing is never
          // up to date, so the child's claim checks its ancestors instead.
          if (task.key.length === 1 && task.key[0] === 'p') {
            busyReads = 1000;
            await workerEngine.queue({
              name: 'c',
              type: 't',
              parent: { key: ['p'] },
              priority: 10,
            });
          } else if (task.key[0] !== 'p') await gate;
        },
      },
      { world, concurrency: 8, engine: workerEngine, logger: memoryLogger(), pollMs: 200 },
    );
    await eventually(() => started.includes('p/c'));
    expect(busy).toBeGreaterThanOrEqual(1);
    expect(started).toHaveLength(9);
    expect(started[8]).toBe('p/c');
    release();
    await worker.stop();
    await Promise.all([producer.close(), raw.close()]);
  });

  it('engine.claim: the child of a just-completed parent comes before lower-priority roots', async () => {
    const producer = await backend().connect();
    const { engine } = await childAndRoots(producer, 10, new TestClock());
    const parent = await engine.claim();
    expect(parent?.key).toEqual(['p']);
    // While the parent runs, the roots come first: the child is blocked.
    const root = await engine.claim();
    expect(root?.key).toEqual(['r0']);
    await engine.complete(parent!, 'done');
    const next = await engine.claim();
    expect(next?.key).toEqual(['p', 'c']);
    await engine.complete(root!, 'done');
    await engine.complete(next!, 'done');
    await producer.close();
  });
  it('a parent whose completion was refused is claimed again, and its bucket is not re-read on every claim', async () => {
    const raw = await backend().connect();
    const { c, counts } = counting(raw);
    const { engine } = await childAndRoots(c, 10, new TestClock());
    const parent = await engine.claim();
    expect(parent?.key).toEqual(['p']);
    // The claim is lost under the worker (its working node removed), so the completion is
    // refused and the parent's entry stays, under the same name.
    await raw.delete(parent!.workingPath);
    expect((await engine.complete(parent!, 'done')).status).not.toBe('completed');
    // One re-read of the bucket shows the parent still pending: it is claimable again (the
    // roots read ahead may come first), and later claims work from the cached listing.
    const listings = counts.byMethod.childrenWithStat ?? 0;
    const next: string[] = [];
    for (let i = 0; i < 6; i++) next.push((await engine.claim())?.key.join('/') ?? 'none');
    expect(next).toContain('p');
    expect(next).not.toContain('p/c');
    expect((counts.byMethod.childrenWithStat ?? 0) - listings).toBe(1);
    await raw.close();
  });
});
