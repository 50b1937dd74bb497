import {
  type Coordinator,
  createEngine,
  type ReapReport,
  runWorker,
  updateRetention,
  type WorkerHandle,
} from '@zoott/core';
import { type TestBackend, zookeeperBackend } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';

const TOTAL = Number(process.env.ZOOTT_RETENTION_TASKS ?? 50_000);
const KEEP = 2000;

/** Runs `fn(i)` for i in [0, n) with at most `width` promises in flight. */
async function pipelined(n: number, width: number, fn: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/** Reports of every pass, per worker, and the warnings its logger got. */
function observed() {
  const reports: ReapReport[] = [];
  const logger = memoryLogger();
  const t0 = Date.now();
  return {
    reports,
    logger,
    onPass: (r: ReapReport) => {
      reports.push(r);
      if (process.env.ZOOTT_RETENTION_VERBOSE && r.leader)
        console.log(Date.now() - t0, r.records, r.completedKept, r.skipped);
    },
  };
}

const removedBy = (reports: ReapReport[]) => reports.reduce((n, r) => n + r.records, 0);

describe('retention on a real ZooKeeper [zookeeper]', () => {
  let backend: TestBackend;
  const opened: Coordinator[] = [];
  // Straight to the server: the fault-injection proxy would share the test's CPU.
  const direct = async () => {
    const c = await connectZk(backend.connectString!);
    opened.push(c);
    return c;
  };
  beforeAll(async () => {
    backend = await zookeeperBackend(inject('zkConnect'));
  });
  afterAll(async () => {
    await Promise.allSettled(opened.map((c) => c.close()));
    await backend?.cleanup();
  });

  it(`a world that ran ${TOTAL} tasks holds no more than its limits`, {
    timeout: 300_000,
  }, async () => {
    const producer = await direct();
    const world = worldName('keep');
    const engine = createEngine(producer, { world, logger: memoryLogger() });
    await engine.init();
    await updateRetention(producer, world, { completed: { maxAgeMs: null, maxCount: KEEP } });
    const watchers = [observed(), observed(), observed(), observed()];
    const workers: WorkerHandle[] = [];
    for (const o of watchers)
      workers.push(
        runWorker(
          await direct(),
          { noop: () => null },
          {
            world,
            concurrency: 128,
            logger: o.logger,
            stealAfterMs: 500,
            retention: { intervalMs: 1000, busyIntervalMs: 200, onPass: o.onPass },
          },
        ),
      );
    await pipelined(TOTAL, 2000, (i) => engine.queue({ name: `t${i}`, type: 'noop' }));
    await eventually(() => workers.reduce((n, w) => n + w.stats.completed, 0) >= TOTAL, 240_000);
    // The reaper catches up within a few passes of the last completion.
    const root = `/zoott_${world}`;
    await eventually(async () => (await engine.counts()).completed <= KEEP, 60_000);
    await eventually(async () => ((await producer.exists(root))?.numChildren ?? 0) <= KEEP, 60_000);
    await Promise.all(workers.map((w) => w.stop()));
    const counts = await engine.counts();
    expect(counts).toMatchObject({ pending: 0, working: 0, failed: 0 });
    expect(counts.completed).toBeLessThanOrEqual(KEEP);
    // Exactly one worker removed anything, every record once: what it removed and what is
    // left add up to all the tasks, and no removal ever met a record someone else changed.
    const acting = watchers.filter((o) => removedBy(o.reports) > 0);
    expect(acting).toHaveLength(1);
    const reports = watchers.flatMap((o) => o.reports);
    expect(removedBy(reports) + counts.completed).toBe(TOTAL);
    expect(reports.reduce((n, r) => n + r.skipped, 0)).toBe(0);
    for (const o of watchers) expect(o.logger.lines.filter((l) => /reaper/.test(l))).toEqual([]);
  });

  it('one reaper per world: the oldest worker acts, the next takes over when it stops', {
    timeout: 120_000,
  }, async () => {
    const producer = await direct();
    const world = worldName('lead');
    const engine = createEngine(producer, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    await updateRetention(producer, world, { completed: { maxAgeMs: null, maxCount: 0 } });
    const [a, b] = [observed(), observed()];
    const options = (o: ReturnType<typeof observed>) => ({
      world,
      logger: o.logger,
      retention: { intervalMs: 100, busyIntervalMs: 50, onPass: o.onPass },
    });
    const first = runWorker(await direct(), { t: () => 1 }, options(a));
    await eventually(() => first.registryPath !== null);
    const second = runWorker(await direct(), { t: () => 1 }, options(b));
    await eventually(() => second.registryPath !== null && b.reports.length > 0);
    for (let i = 0; i < 20; i++) await engine.queue({ name: `x${i}`, type: 't' });
    await eventually(() => removedBy(a.reports) === 20);
    expect(removedBy(b.reports)).toBe(0);
    expect(b.reports.every((r) => !r.leader)).toBe(true);
    await first.stop();
    for (let i = 0; i < 20; i++) await engine.queue({ name: `y${i}`, type: 't' });
    await eventually(() => removedBy(b.reports) === 20);
    expect(removedBy(a.reports)).toBe(20);
    await second.stop();
    expect(await engine.counts()).toEqual({ pending: 0, working: 0, completed: 0, failed: 0 });
    expect(await producer.children(`/zoott_${world}`)).toEqual([]);
    for (const o of [a, b]) expect(o.logger.lines.filter((l) => /reaper/.test(l))).toEqual([]);
  });
});
