import { createEngine, runWorker } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, TestClock, worldName } from '../engine/helpers.js';

describeOnBackends('engine: the worker on the engine clock', (backend) => {
  it("takes its default id and its start time from the engine's clock, not the system's", async () => {
    const c = await backend().connect();
    const world = worldName();
    // A clock far from the system's time, with a fixed random(): 0.25 of 0xffffffff.
    const clock = new TestClock(42_000, 0.25);
    const engine = createEngine(c, { world, buckets: 2, clock, logger: memoryLogger() });
    await engine.init();
    const worker = runWorker(c, { t: () => 1 }, { world, engine, pollMs: 50 });
    expect(worker.id).toBe('w-3fffffff');
    await eventually(() => worker.registryPath !== null && worker.buckets.length === 2);
    const path = worker.registryPath;
    if (path === null) throw new Error('worker not registered');
    type Info = { id: string; started: number; buckets: number[] };
    const read = async () => JSON.parse(new TextDecoder().decode((await c.get(path)).data)) as Info;
    // The node is rewritten with the buckets once the worker has taken them.
    await eventually(async () => (await read()).buckets.length === 2);
    expect(await read()).toMatchObject({ id: 'w-3fffffff', started: 42_000, buckets: [0, 1] });
    // Work runs, and the completed record's times are the engine clock's too.
    await engine.queue({ name: 'job', type: 't' });
    await eventually(async () => (await engine.counts()).completed === 1);
    const record = await engine.task(['job']);
    expect(record?.state).toBe('completed');
    await worker.stop();
    await c.close();
  });
});
