import { type Coordinator, createEngine, runWorker, type WorkerHandle } from '@zoott/core';
import { type TestBackend, zookeeperBackend } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { counting, eventually, memoryLogger } from '../engine/helpers.js';

const TOTAL = Number(process.env.ZOOTT_SCALE_TASKS ?? 100_000);
const IN_FLIGHT = 4000;

/** Runs `fn(i)` for i in [0, n) with at most `width` promises in flight. */
async function pipelined(n: number, width: number, fn: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

describe('engine at scale [zookeeper]', () => {
  let backend: TestBackend;
  beforeAll(async () => {
    backend = await zookeeperBackend(inject('zkConnect'));
  });
  afterAll(async () => {
    await backend?.cleanup();
  });

  it(`queues and drains ${TOTAL} pending tasks in one world`, { timeout: 540_000 }, async () => {
    // Straight to the server, not through the backend's fault-injection proxy: this test
    // measures the engine, and the proxy would share the test process's CPU.
    const opened: Coordinator[] = [];
    const direct = async () => {
      const c = await connectZk(backend.connectString!);
      opened.push(c);
      return c;
    };
    const producer = await direct();
    const world = 'scale';
    const engine = createEngine(producer, { world, logger: memoryLogger() });
    await engine.init();
    const t0 = Date.now();
    await pipelined(TOTAL, IN_FLIGHT, (i) =>
      engine.queue({ name: `t${i}`, type: 'noop', data: i }, null, null, { priority: i % 3 }),
    );
    const t1 = Date.now();
    expect(await engine.counts()).toEqual({ pending: TOTAL, working: 0, completed: 0, failed: 0 });
    // No bucket listing comes near ZooKeeper's ~1 MB reply limit.
    const sizes = await Promise.all(
      Array.from(
        { length: 64 },
        async (_, b) =>
          (await producer.children(`/zoott_p/${world}/${String(b).padStart(4, '0')}`)).join('')
            .length,
      ),
    );
    expect(Math.max(...sizes)).toBeLessThan(200_000);
    if (process.env.ZOOTT_SCALE_VERBOSE) console.log(`queued ${TOTAL} in ${t1 - t0} ms`);
    const handles: WorkerHandle[] = [];
    const counted = [];
    for (let w = 0; w < 3; w++) {
      const wc = counting(await direct());
      counted.push(wc);
      handles.push(
        runWorker(
          wc.c,
          { noop: (t) => t.data },
          {
            world,
            concurrency: Number(process.env.ZOOTT_SCALE_CONC ?? 256),
            logger: memoryLogger(),
            stealAfterMs: 500,
            pollMs: 1000,
          },
        ),
      );
    }
    const progress = process.env.ZOOTT_SCALE_VERBOSE
      ? setInterval(() => {
          const n = handles.reduce((k, h) => k + h.stats.completed, 0);
          console.log(
            `drained ${n} after ${Date.now() - t1} ms`,
            JSON.stringify(handles.map((h) => h.stats)),
          );
        }, 10_000)
      : undefined;
    // Poll the workers' own stats (no reads), not the world counts: 4 x 64 stat reads per
    // poll would load the server the test is measuring.
    await eventually(
      () => handles.reduce((n, h) => n + h.stats.completed, 0) >= TOTAL,
      480_000,
    ).catch(async (err) => {
      console.log(JSON.stringify(handles.map((h) => h.stats)), await engine.counts());
      throw err;
    });
    const t2 = Date.now();
    clearInterval(progress);
    await Promise.all(handles.map((h) => h.stop()));
    expect(await engine.counts()).toEqual({ pending: 0, working: 0, completed: TOTAL, failed: 0 });
    const completed = handles.reduce((n, h) => n + h.stats.completed, 0);
    expect(completed).toBe(TOTAL);
    // Two writes per task on the worker side (claim, complete), plus registry upkeep and the
    // odd claim lost to another worker.
    const writes = counted.reduce((n, w) => n + w.counts.writes, 0);
    expect(writes).toBeLessThan(TOTAL * 2.05 + 100);
    const reads = counted.reduce((n, w) => n + w.counts.reads, 0);
    console.log(JSON.stringify(counted.map((w) => [w.counts.byMethod, w.counts.errors])));
    await Promise.all(opened.map((c) => c.close()));
    console.log(
      `scale: queue ${t1 - t0} ms, drain ${t2 - t1} ms, worker writes/task ${(writes / TOTAL).toFixed(3)}, reads/task ${(reads / TOTAL).toFixed(3)}`,
    );
  });
});
