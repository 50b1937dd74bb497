import { createEngine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from './helpers.js';

describeOnBackends('engine: fencing', (backend) => {
  it('drops the result of a worker whose session expired; another worker runs the task', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'task', type: 't' });
    const w1 = await backend().connect();
    const log1 = memoryLogger();
    const e1 = createEngine(w1, { world, logger: log1 });
    const claim = await e1.claim({ worker: 'one' });
    expect(claim?.worker).toBe('one');
    expect((await engine.task(['task']))?.state).toBe('working');
    await backend().expireSession(w1);
    // The working node went with the session: another worker takes the task.
    const w2 = await backend().connect();
    const e2 = createEngine(w2, { world, logger: memoryLogger() });
    const second = await e2.claim({ worker: 'two' });
    expect(second?.attempt).toBe(2);
    // The first worker, session lost, can never complete.
    const out = await e1.complete(claim!, 'stale');
    expect(out.status).toBe('dropped');
    expect(log1.lines).toContain('result dropped: fenced');
    // Even on a new session it is refused locally: nothing is sent for a claim of another
    // session (the server would refuse it too, but only once asked).
    await w1.renewSession();
    expect(await e1.complete(claim!, 'stale')).toMatchObject({
      status: 'dropped',
      reason: expect.stringContaining('claim belongs to session'),
    });
    expect(await e2.complete(second!, 'fresh')).toEqual({ status: 'completed' });
    expect(await engine.task(['task'])).toMatchObject({ state: 'completed', result: 'fresh' });
    await Promise.all([producer, w1, w2].map((x) => x.close()));
  });

  it('of racing claimers exactly one wins', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'only', type: 't' });
    const clients = await Promise.all([1, 2, 3, 4].map(() => backend().connect()));
    const claims = await Promise.all(
      clients.map((x, i) =>
        createEngine(x, { world, logger: memoryLogger() }).claim({ worker: `w${i}` }),
      ),
    );
    expect(claims.filter((x) => x !== null)).toHaveLength(1);
    await Promise.all([producer, ...clients].map((x) => x.close()));
  });
});
