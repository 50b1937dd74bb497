import { createEngine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from './helpers.js';

describeOnBackends('engine: re-queue rules', (backend) => {
  it('updates a pending task, reopens completed and failed ones, refuses a working one', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 2, logger: memoryLogger() });
    await engine.init();
    const [first] = await engine.queue({ name: 'job', type: 't', data: 1 });
    expect(first?.previous).toBeNull();
    // Pending: data and options are replaced, still one entry.
    const [again] = await engine.queue({ name: 'job', type: 't', data: 2 }, null, null, {
      priority: 5,
    });
    expect(again?.previous).toBe('pending');
    expect(await engine.counts()).toMatchObject({ pending: 1 });
    expect(await engine.task(['job'])).toMatchObject({ data: 2, priority: 5, state: 'pending' });
    // Working: refused.
    const claim = await engine.claim();
    expect(claim?.data).toBe(2);
    await expect(engine.queue({ name: 'job', type: 't', data: 3 })).rejects.toMatchObject({
      code: 'TASK_STATE',
    });
    // Completed: back to pending with the new data.
    await engine.complete(claim!, 'r1');
    const [reopened] = await engine.queue({ name: 'job', type: 't', data: 4 });
    expect(reopened?.previous).toBe('completed');
    expect(await engine.counts()).toEqual({ pending: 1, working: 0, completed: 0, failed: 0 });
    // Failed: back to pending.
    await engine.queue({ name: 'job', type: 't', data: 5 }, null, null, { maxAttempts: 1 });
    await engine.fail((await engine.claim())!, 'no');
    const [fromFailed] = await engine.queue({ name: 'job', type: 't', data: 6 });
    expect(fromFailed?.previous).toBe('failed');
    expect(await engine.counts()).toEqual({ pending: 1, working: 0, completed: 0, failed: 0 });
    expect((await engine.claim())?.data).toBe(6);
    // Name + type is the key: the same name with another type is refused.
    await expect(engine.queue({ name: 'job', type: 'other' })).rejects.toMatchObject({
      code: 'INVALID_TASK',
      field: 'type',
    });
    await c.close();
  });

  it('lets exactly one of many concurrent re-queuers of one task win each round', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'hot', type: 't' });
    const others = await Promise.all([1, 2, 3].map(() => backend().connect()));
    await Promise.all(
      others.map((o, i) =>
        createEngine(o, { world: engine.world, logger: memoryLogger() }).queue({
          name: 'hot',
          type: 't',
          data: i,
        }),
      ),
    );
    const pending = await engine.list('pending');
    expect(pending).toHaveLength(1);
    await Promise.all([c, ...others].map((x) => x.close()));
  });
});
