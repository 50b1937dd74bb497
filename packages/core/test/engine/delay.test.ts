import { createEngine, runWorker } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, TestClock, worldName } from './helpers.js';

describeOnBackends('engine: delayed tasks', (backend) => {
  it('a task queued with notBefore does not start before it, on the engine clock', async () => {
    const clock = new TestClock();
    const producer = await backend().connect();
    const world = worldName('dl');
    const engine = createEngine(producer, { world, buckets: 1, clock, logger: memoryLogger() });
    await engine.init();
    const notBefore = clock.now() + 30_000;
    await engine.queue({ name: 'later', type: 't', notBefore });
    // Queued after the delayed task in the same bucket: once it has run, the worker has
    // passed over the delayed one.
    await engine.queue({ name: 'now', type: 't' });
    const wc = await backend().connect();
    const ran: string[] = [];
    const worker = runWorker(
      wc,
      {
        t: (task) => {
          ran.push(task.name);
          return clock.now();
        },
      },
      { world, clock, logger: memoryLogger(), pollMs: 50, stealAfterMs: 10 },
    );
    await eventually(() => ran.includes('now'));
    expect(ran).toEqual(['now']);
    expect(await engine.task(['later'])).toMatchObject({
      state: 'pending',
      attempts: 0,
      notBefore,
    });

    clock.advance(29_999);
    await engine.queue({ name: 'now2', type: 't' });
    await eventually(() => ran.includes('now2'));
    expect(ran).not.toContain('later');

    clock.advance(1);
    await eventually(() => ran.includes('later'));
    // The handler has started; its completion is written after it returns.
    await eventually(async () => (await engine.task(['later']))?.state === 'completed');
    const rec = await engine.task(['later']);
    expect(rec?.state).toBe('completed');
    expect(rec?.startedAt).toBeGreaterThanOrEqual(notBefore);
    await worker.stop();
    await Promise.all([producer.close(), wc.close()]);
  });
});
