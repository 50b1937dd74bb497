import { createEngine, runWorker } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { counting, eventually, memoryLogger, TestClock, worldName } from '../engine/helpers.js';

/**
 * More roots than a listing needs to count as "plenty of work" (2 x the lookahead of 16): a
 * listing that holds them is served from its cache for `relistMs` after a change, and time
 * stands still here (a TestClock), so only the completion's own look can show the child.
 */
const ROOTS = 40;

describeOnBackends('engine: a child queued after the listing was read', (backend) => {
  async function setup() {
    const producer = await backend().connect();
    const name = worldName();
    const engine = createEngine(producer, {
      world: name,
      buckets: 1,
      clock: new TestClock(),
      logger: memoryLogger(),
    });
    await engine.init();
    return { producer, world: name, engine };
  }

  it("a child its parent queued while running (through its worker's engine) is the next task its worker claims", async () => {
    const { producer, world, engine } = await setup();
    await engine.queue({ name: 'p', type: 't' });
    for (let i = 0; i < ROOTS; i++) await engine.queue({ name: `r${i}`, type: 't' });
    const started: string[] = [];
    const wc = await backend().connect();
    // The handler queues through the engine its worker claims with, as a handler that
    // queues children is meant to: that engine's completion then knows to look.
    const workerEngine = createEngine(wc, {
      world,
      clock: new TestClock(),
      logger: memoryLogger(),
    });
    const worker = runWorker(
      wc,
      {
        t: async (task) => {
          started.push(task.key.join('/'));
          // The worker's listing was read before this: it knows no child of p.
          if (task.key.length === 1 && task.key[0] === 'p')
            await workerEngine.queue({
              name: 'c',
              type: 't',
              parent: { key: ['p'] },
              priority: 10,
            });
        },
      },
      { world, concurrency: 1, engine: workerEngine, logger: memoryLogger(), pollMs: 200 },
    );
    await eventually(() => worker.stats.completed >= 3);
    await worker.stop();
    expect(started.slice(0, 3)).toEqual(['p', 'p/c', 'r0']);
    await Promise.all([producer.close(), wc.close()]);
  });

  for (const how of ['queue', 'queueMany'] as const)
    it(`engine.claim: a child queued through the same engine (${how}) while its parent ran comes before the roots`, async () => {
      const { producer, engine } = await setup();
      await engine.queue({ name: 'p', type: 't' });
      for (let i = 0; i < ROOTS; i++) await engine.queue({ name: `r${i}`, type: 't' });
      const parent = await engine.claim();
      expect(parent?.key).toEqual(['p']);
      // The engine's listing, read for the claim, lacks the child; its own queue notes it.
      const child = { name: 'd', type: 't', parent: { key: ['p'] }, priority: 10 };
      if (how === 'queue') await engine.queue(child);
      else await engine.queueMany([child, { ...child, name: 'e' }]);
      await engine.complete(parent!, 'done');
      expect((await engine.claim())?.key).toEqual(['p', 'd']);
      await producer.close();
    });

  it("a child queued by another process while its parent ran is seen at its bucket's next listing, like any new task", async () => {
    const { producer, engine } = await setup();
    const clock = new TestClock();
    const raw = await backend().connect();
    const { c, counts } = counting(raw);
    const worker = createEngine(c, { world: engine.world, clock, logger: memoryLogger() });
    await engine.queue({ name: 'p', type: 't' });
    for (let i = 0; i < ROOTS; i++) await engine.queue({ name: `r${i}`, type: 't' });
    const parent = await worker.claim();
    expect(parent?.key).toEqual(['p']);
    await engine.queue({ name: 'd', type: 't', parent: { key: ['p'] }, priority: 10 });
    // The producer is another Engine object: its note of the child is its own, and the
    // worker's engine has none, as if another process had queued it.
    expect((await engine.context()).hints.queuedChildUnder(['p'])).toBe(true);
    expect((await worker.context()).hints.queuedChildUnder(['p'])).toBe(false);
    const exists = counts.byMethod.exists ?? 0;
    await worker.complete(parent!, 'done');
    expect(counts.byMethod.exists ?? 0).toBe(exists);
    // Served from the cached listing until it is old enough to be read again.
    expect((await worker.claim())?.key).toEqual(['r0']);
    clock.advance(60_000);
    await expect.poll(async () => (await worker.claim())?.key).toEqual(['p', 'd']);
    await Promise.all([producer.close(), raw.close()]);
  });

  it('once tasks of a type were seen here with children, a completion of that type looks for a child another process queued', async () => {
    const { producer, engine } = await setup();
    const worker = createEngine(await backend().connect(), {
      world: engine.world,
      clock: new TestClock(),
      logger: memoryLogger(),
    });
    await engine.queue({ name: 'a', type: 'pt', priority: 9 });
    await engine.queue({ name: 'x', type: 't', parent: { key: ['a'] } });
    await engine.queue({ name: 'p', type: 'pt', priority: 5 });
    for (let i = 0; i < ROOTS; i++) await engine.queue({ name: `r${i}`, type: 't' });
    // a completes with its child listed: tasks of type pt have children.
    const a = await worker.claim();
    expect(a?.key).toEqual(['a']);
    await worker.complete(a!, 'done');
    const parent = await worker.claim();
    expect(parent?.key).toEqual(['p']);
    await engine.queue({ name: 'd', type: 't', parent: { key: ['p'] }, priority: 10 });
    // Queued through another Engine object: no note here that p has a new child.
    expect((await worker.context()).hints.queuedChildUnder(['p'])).toBe(false);
    await worker.complete(parent!, 'done');
    expect((await worker.claim())?.key).toEqual(['p', 'd']);
    await producer.close();
  });

  it('a completed task without children here costs no read and no listing', async () => {
    const raw = await backend().connect();
    const { c, counts } = counting(raw);
    const engine = createEngine(c, {
      world: worldName(),
      buckets: 1,
      clock: new TestClock(),
      logger: memoryLogger(),
    });
    await engine.init();
    for (let i = 0; i < ROOTS; i++) await engine.queue({ name: `r${i}`, type: 't' });
    const first = await engine.claim();
    // Another root arrives: the listing is stale, but no child of this task was queued here.
    await engine.queue({ name: 'late', type: 't' });
    const before = { ...counts.byMethod };
    await engine.complete(first!, 'done');
    expect((counts.byMethod.exists ?? 0) - (before.exists ?? 0)).toBe(0);
    // No child, so the next claim is served from the cached listing (read again later).
    expect((await engine.claim())?.key).toEqual(['r1']);
    expect((counts.byMethod.childrenWithStat ?? 0) - (before.childrenWithStat ?? 0)).toBe(0);
    await raw.close();
  });
});
