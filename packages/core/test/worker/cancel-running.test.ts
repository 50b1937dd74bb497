import { createEngine, runWorker, type WorkerCancelledEvent } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';

const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };

describeOnBackends('engine: cancel of a running task', (backend) => {
  it('aborts the handler, records nothing and frees the slot', async () => {
    const producer = await backend().connect();
    const world = worldName('cx');
    const engine = createEngine(producer, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'long', type: 'wait' });
    const wc = await backend().connect();
    let started = false;
    let abortReason: unknown = null;
    const worker = runWorker(
      wc,
      {
        // Runs until its signal aborts, then returns a result that must not be recorded.
        wait: (t) =>
          new Promise((resolve) => {
            started = true;
            t.signal.addEventListener('abort', () => {
              abortReason = t.signal.reason;
              resolve('finished anyway');
            });
          }),
        quick: () => 'ok',
      },
      { world, concurrency: 1, logger: memoryLogger(), ...fast },
    );
    const cancelled: WorkerCancelledEvent[] = [];
    const completed: unknown[] = [];
    const errors: unknown[] = [];
    worker.on('cancelled', (e) => cancelled.push(e));
    worker.on('completed', (e) => completed.push(e));
    worker.on('error', (e) => errors.push(e));
    await eventually(() => started);
    expect((await engine.task(['long']))?.state).toBe('working');

    expect(await engine.cancel(['long'])).toEqual([['long']]);
    await eventually(() => cancelled.length === 1);
    expect(abortReason).toMatchObject({
      code: 'ABORTED',
      message: expect.stringMatching(/the task was cancelled/),
    });
    expect(cancelled[0]).toMatchObject({ key: ['long'], type: 'wait', attempt: 1 });
    expect(completed).toEqual([]);
    expect(errors).toEqual([]);
    expect(await engine.task(['long'])).toBeNull();
    expect(await engine.counts()).toMatchObject({ pending: 0, working: 0, completed: 0 });

    // The one slot is free again: the next task runs.
    await engine.queue({ name: 'next', type: 'quick' });
    await eventually(() => completed.length === 1);
    expect(worker.stats).toMatchObject({ claimed: 2, completed: 1, dropped: 1 });
    await worker.stop();
    await Promise.all([producer.close(), wc.close()]);
  });

  it('a handler that ends before its cancel watch is set costs no extra read', async () => {
    const producer = await backend().connect();
    const world = worldName('cy');
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'a', type: 't' });
    const wc = await backend().connect();
    const paths: string[] = [];
    const exists = wc.exists.bind(wc);
    wc.exists = (path, options) => {
      paths.push(path);
      return exists(path, options);
    };
    const worker = runWorker(
      wc,
      { t: () => 'done' },
      // Longer than the test: the watch is never set for this instant handler.
      { world, logger: memoryLogger(), cancelWatchAfterMs: 60_000, ...fast },
    );
    await new Promise<void>((r) => worker.once('drained', () => r()));
    await worker.stop();
    expect(paths.filter((p) => p.startsWith(`/zoott_w/${world}/`))).toEqual([]);
    expect((await engine.task(['a']))?.state).toBe('completed');
    await Promise.all([producer.close(), wc.close()]);
  });
});
