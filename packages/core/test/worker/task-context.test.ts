import { createEngine, runWorker, type TaskContext } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';

describeOnBackends('engine: the context a handler gets', (backend) => {
  it("shows the task's fields and hands out its functions, never the engine's objects behind them", async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'seen', type: 't', data: { n: 1 }, hints: { server: 'h1' } });
    const wc = await backend().connect();
    let seen: { json: string; keys: string[]; reported: boolean } | undefined;
    const worker = runWorker(
      wc,
      {
        t: (task: TaskContext) => {
          // A handler may log or serialise its context, and take its functions apart.
          const { progress, log } = task;
          progress({ step: 1 });
          log('a line');
          seen = {
            json: JSON.stringify(task),
            keys: Object.keys(task).sort(),
            reported: typeof task.parentResult === 'function',
          };
          return 'ok';
        },
      },
      { world, logger: memoryLogger(), pollMs: 50 },
    );
    try {
      await eventually(async () => (await engine.task(['seen']))?.state === 'completed');
      expect(seen).toBeDefined();
      expect(seen!.keys).toEqual(
        ['attempt', 'data', 'hints', 'key', 'maxAttempts', 'name', 'type', 'worker'].sort(),
      );
      expect(JSON.parse(seen!.json)).toMatchObject({
        key: ['seen'],
        name: 'seen',
        type: 't',
        data: { n: 1 },
        hints: { server: 'h1' },
      });
      expect(seen!.reported).toBe(true);
    } finally {
      await worker.stop();
      await wc.close();
      await producer.close();
    }
  });
});
