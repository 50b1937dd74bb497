import {
  type Coordinator,
  createEngine,
  type Engine,
  type EngineClock,
  readRetention,
  runWorker,
  type TreeNode,
  updateRetention,
} from '@zoott/core';
import { Reaper, type ReaperOptions } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, TestClock, worldName } from '../engine/helpers.js';

const HOUR = 3_600_000;

interface World {
  c: Coordinator;
  engine: Engine;
  clock: TestClock;
  logger: ReturnType<typeof memoryLogger>;
  reaper: (options?: ReaperOptions) => Promise<Reaper>;
  run: (name: string, parent?: string[]) => Promise<void>;
}

async function world(connect: () => Promise<Coordinator>): Promise<World> {
  const c = await connect();
  const name = worldName('ret');
  const clock = new TestClock(5_000_000);
  const logger = memoryLogger();
  const engine = createEngine(c, { world: name, buckets: 2, clock, logger });
  await engine.init();
  const ctx = await engine.context();
  return {
    c,
    engine,
    clock,
    logger,
    // A reaper as a worker runs it, with a registration of its own (the election's input).
    reaper: async (options = {}) => {
      const path = await c.create(`${ctx.layout.registry}/worker-`, new Uint8Array(), {
        ephemeral: true,
        sequential: true,
      });
      return new Reaper(ctx, () => path, options);
    },
    // Queues a task and runs it to completion by hand: claim, complete.
    run: async (task, parent) => {
      await engine.queue({
        name: task,
        type: 't',
        ...(parent ? { parent: { key: parent } } : {}),
      });
      const claim = await engine.claim();
      if (claim?.name !== task) throw new Error(`expected to claim ${task}, got ${claim?.name}`);
      expect((await engine.complete(claim, task)).status).toBe('completed');
    },
  };
}

async function completedNames(engine: Engine): Promise<string[]> {
  return (await engine.list('completed')).map((t) => t.key.join('|')).sort();
}

async function treeKeys(engine: Engine): Promise<string[]> {
  const out: string[] = [];
  const walk = (nodes: TreeNode[]) => {
    for (const n of nodes) {
      out.push(n.key.join('|'));
      walk(n.children);
    }
  };
  walk(await engine.tree());
  return out.sort();
}

describeOnBackends('retention: the reaper', (backend) => {
  it('removes completed records (and their leaves in the task tree) once older than the age limit', async () => {
    const w = await world(() => backend().connect());
    await updateRetention(w.c, w.engine.world, { completed: { maxAgeMs: HOUR, maxCount: null } });
    for (const t of ['a', 'b']) await w.run(t);
    const reaper = await w.reaper();
    expect(await reaper.pass()).toMatchObject({ leader: true, records: 0, completedKept: 2 });
    w.clock.advance(HOUR / 2);
    await w.run('c');
    expect((await reaper.pass()).records).toBe(0);
    w.clock.advance(HOUR / 2 + 1);
    const report = await reaper.pass();
    expect(report).toMatchObject({ records: 2, treeNodes: 2, skipped: 0, completedKept: 1 });
    expect(await completedNames(w.engine)).toEqual(['c']);
    expect(await treeKeys(w.engine)).toEqual(['c']);
    w.clock.advance(HOUR);
    expect((await reaper.pass()).records).toBe(1);
    expect(await treeKeys(w.engine)).toEqual([]);
    await w.c.close();
  });

  it('keeps the newest records up to the count limit', async () => {
    const w = await world(() => backend().connect());
    await updateRetention(w.c, w.engine.world, { completed: { maxAgeMs: null, maxCount: 3 } });
    for (const t of ['t1', 't2', 't3', 't4', 't5']) await w.run(t);
    const reaper = await w.reaper();
    expect(await reaper.pass()).toMatchObject({ records: 2, completedKept: 3 });
    expect(await completedNames(w.engine)).toEqual(['t3', 't4', 't5']);
    // Later records are ordered by when the reaper first saw them.
    w.clock.advance(1);
    await w.run('t6');
    expect((await reaper.pass()).records).toBe(1);
    expect(await completedNames(w.engine)).toEqual(['t4', 't5', 't6']);
    w.clock.advance(1);
    await w.run('t7');
    expect((await reaper.pass()).records).toBe(1);
    expect(await completedNames(w.engine)).toEqual(['t5', 't6', 't7']);
    await w.c.close();
  });

  it('removes a completed subtree: a parent record with children first, the bare parent with its last child', async () => {
    const w = await world(() => backend().connect());
    await updateRetention(w.c, w.engine.world, { completed: { maxAgeMs: HOUR, maxCount: null } });
    await w.run('p');
    const reaper = await w.reaper();
    await reaper.pass();
    w.clock.advance(HOUR / 2);
    await w.run('c', ['p']);
    await reaper.pass();
    w.clock.advance(HOUR / 2 + 1);
    // The parent's record expired, its child's has not: the parent stays in the tree, bare.
    expect(await reaper.pass()).toMatchObject({ records: 1, treeNodes: 0 });
    expect(await treeKeys(w.engine)).toEqual(['p', 'p|c']);
    expect((await w.engine.task(['p']))?.state).not.toBe('completed');
    w.clock.advance(HOUR);
    expect(await reaper.pass()).toMatchObject({ records: 1, treeNodes: 2 });
    expect(await treeKeys(w.engine)).toEqual([]);
    await w.c.close();
  });

  it('keeps a parent in the tree while it holds a record, when its child goes first', async () => {
    const w = await world(() => backend().connect());
    await updateRetention(w.c, w.engine.world, { completed: { maxAgeMs: null, maxCount: 1 } });
    await w.run('p');
    await w.run('c', ['p']);
    // The parent runs again after its child: its record is now the newest.
    await w.run('p');
    const reaper = await w.reaper();
    expect(await reaper.pass()).toMatchObject({ records: 1, treeNodes: 1 });
    expect(await treeKeys(w.engine)).toEqual(['p']);
    expect((await w.engine.task(['p']))?.state).toBe('completed');
    await w.c.close();
  });

  it('leaves a record alone when its task was queued again after the reaper saw it', async () => {
    const w = await world(() => backend().connect());
    await updateRetention(w.c, w.engine.world, { completed: { maxAgeMs: HOUR, maxCount: null } });
    await w.run('a');
    const reaper = await w.reaper();
    await reaper.pass();
    // Queued again and completed again: the record under the same name is a new one.
    w.clock.advance(HOUR / 2);
    await w.run('a');
    w.clock.advance(HOUR / 2 + 1);
    expect(await reaper.pass()).toMatchObject({ records: 0, skipped: 1 });
    expect(await completedNames(w.engine)).toEqual(['a']);
    // Seen again as new: it goes a full hour after that.
    await reaper.pass();
    w.clock.advance(HOUR + 1);
    expect((await reaper.pass()).records).toBe(1);
    await w.c.close();
  });

  it.each([
    ['a leaf', false],
    ['a parent', true],
  ])(
    'leaves a task (%s) queued and completed again while its removal is on the way',
    async (_what, parent) => {
      const w = await world(() => backend().connect());
      await updateRetention(w.c, w.engine.world, { completed: { maxAgeMs: HOUR, maxCount: null } });
      await w.run('a');
      if (parent) await w.run('k', ['a']);
      const ctx = await w.engine.context();
      // The reaper's session: right before its first removal multi goes out, another client
      // queues the task again and completes it (a new record under the same name).
      const other = createEngine(await backend().connect(), {
        world: w.engine.world,
        clock: w.clock,
        logger: memoryLogger(),
      });
      let raced = false;
      const racing = new Proxy(w.c, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (prop !== 'multi' || typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            if (!raced) {
              raced = true;
              await other.queue({ name: 'a', type: 't' });
              const claim = await other.claim();
              if (!claim) throw new Error('nothing to claim');
              await other.complete(claim, 'again');
            }
            return value.apply(target, args);
          };
        },
      });
      const path = await w.c.create(`${ctx.layout.registry}/worker-`, new Uint8Array(), {
        ephemeral: true,
        sequential: true,
      });
      const reaper = new Reaper({ ...ctx, coordinator: racing }, () => path);
      await reaper.pass();
      w.clock.advance(HOUR + 1);
      expect(await reaper.pass()).toMatchObject({ records: parent ? 1 : 0, skipped: 1 });
      expect(raced).toBe(true);
      expect((await w.engine.task(['a']))?.result).toBe('again');
      await w.c.close();
    },
  );

  it('acts only in the elected reaper: the oldest live registration', async () => {
    const w = await world(() => backend().connect());
    await updateRetention(w.c, w.engine.world, { completed: { maxAgeMs: null, maxCount: 0 } });
    const first = await w.reaper();
    const second = await w.reaper();
    for (const t of ['a', 'b', 'c']) await w.run(t);
    const [r2, r1] = [await second.pass(), await first.pass()];
    expect(r2).toMatchObject({ leader: false, records: 0 });
    expect(r1).toMatchObject({ leader: true, records: 3 });
    await w.c.close();
  });

  it('stop ends the sleep between passes at once, and one that comes during a pass too', async () => {
    const c = await backend().connect();
    // A clock whose sleeps end only when cut short: a stop that did not cut the sleep hangs.
    let sleeps = 0;
    const clock: EngineClock = {
      now: () => Date.now(),
      random: () => 0.5,
      sleep: (_ms, signal) => {
        sleeps++;
        return new Promise<void>((resolve) => {
          if (signal?.aborted) return resolve();
          signal?.addEventListener('abort', () => resolve(), { once: true });
        });
      },
    };
    const engine = createEngine(c, { world: worldName('rst'), buckets: 2, clock });
    await engine.init();
    const ctx = await engine.context();
    const asleep = new Reaper(ctx, () => null, { intervalMs: HOUR, busyIntervalMs: HOUR });
    asleep.start();
    await eventually(() => sleeps === 1);
    await asleep.stop();
    // Stopped while its first pass is still out: the sleep after it returns at once.
    const passing = new Reaper(ctx, () => null, { intervalMs: HOUR, busyIntervalMs: HOUR });
    passing.start();
    await passing.stop();
    await c.close();
  });

  it('merges concurrent changes of the settings, and refuses a bad one without writing', async () => {
    const w = await world(() => backend().connect());
    await Promise.all([
      updateRetention(w.c, w.engine.world, { completed: { maxCount: 7 } }),
      updateRetention(w.c, w.engine.world, { results: { maxAgeMs: 5000 } }),
    ]);
    const read = await readRetention(w.c, w.engine.world);
    expect(read.stored).toBe(true);
    expect(read.settings.completed.maxCount).toBe(7);
    expect(read.settings.results.maxAgeMs).toBe(5000);
    await expect(
      updateRetention(w.c, w.engine.world, { completed: { maxCount: 3, maxAgeMs: -1 } }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    expect((await readRetention(w.c, w.engine.world)).settings.completed.maxCount).toBe(7);
    // The world meta keeps its other fields.
    expect((await w.engine.context()).layout.buckets).toBe(2);
    await w.c.close();
  });

  it('keeps reaping after the worker lost its session (and its watches) and renewed it', async () => {
    const w = await world(() => backend().connect());
    await updateRetention(w.c, w.engine.world, { completed: { maxAgeMs: null, maxCount: 0 } });
    const wc = await backend().connect();
    const removed: number[] = [];
    const worker = runWorker(
      wc,
      { t: () => 1 },
      {
        world: w.engine.world,
        logger: memoryLogger(),
        pollMs: 50,
        retention: {
          intervalMs: 100,
          busyIntervalMs: 100,
          onPass: (r) => removed.push(r.records),
        },
      },
    );
    const total = () => removed.reduce((a, b) => a + b, 0);
    await w.engine.queue({ name: 'before', type: 't' });
    await eventually(() => total() === 1);
    const session = wc.sessionId;
    await backend().expireSession(wc);
    await eventually(() => wc.sessionId !== session && wc.state === 'connected');
    await w.engine.queue({ name: 'after', type: 't' });
    await eventually(() => total() === 2);
    expect(await completedNames(w.engine)).toEqual([]);
    await worker.stop();
    await wc.close();
    await w.c.close();
  });

  it('counts failed records and warns once past the cap, keeping them', async () => {
    const w = await world(() => backend().connect());
    await updateRetention(w.c, w.engine.world, { failed: { warnCount: 1 } });
    for (const t of ['x', 'y']) {
      await w.engine.queue({ name: t, type: 't', maxAttempts: 1 });
      const claim = await w.engine.claim();
      if (!claim) throw new Error('nothing to claim');
      expect((await w.engine.fail(claim, new Error('boom'))).status).toBe('failed');
    }
    const reaper = await w.reaper();
    expect((await reaper.pass()).failed).toBe(2);
    await reaper.pass();
    const warned = w.logger.lines.filter((l) => l.includes('past the retention cap'));
    expect(warned).toHaveLength(1);
    expect((await w.engine.counts()).failed).toBe(2);
    await w.c.close();
  });
});
