import { createEngine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, TestClock, worldName } from './helpers.js';

describeOnBackends('engine: retry, backoff, dead letter, cancel', (backend) => {
  it('retries with capped exponential backoff and dead-letters after the last attempt', async () => {
    const c = await backend().connect();
    const clock = new TestClock(1_000_000, 0.999);
    const engine = createEngine(c, {
      world: worldName(),
      buckets: 2,
      clock,
      logger: memoryLogger(),
    });
    await engine.init();
    await engine.queue({ name: 'flaky', type: 't' }, null, null, {
      maxAttempts: 4,
      backoff: { baseMs: 100, maxMs: 250 },
    });
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claim = await engine.claim();
      expect(claim?.attempt).toBe(attempt);
      const out = await engine.fail(claim!, new Error(`try ${attempt}`));
      expect(out.status).toBe('retrying');
      const wait = (out as { notBefore: number }).notBefore - clock.now();
      delays.push(wait);
      // Not claimable before notBefore.
      expect(await engine.claim()).toBeNull();
      clock.advance(wait);
    }
    // random() = 0.999: just under the ceiling 100, 200, then capped at 250.
    expect(delays).toEqual([99, 199, 249]);
    const last = await engine.claim();
    expect(last?.attempt).toBe(4);
    expect(await engine.fail(last!, new Error('final'))).toEqual({
      status: 'failed',
      error: expect.objectContaining({ code: 'HANDLER_ERROR', message: 'final' }),
    });
    expect(await engine.counts()).toEqual({ pending: 0, working: 0, completed: 0, failed: 1 });
    const rec = await engine.task(['flaky']);
    expect(rec).toMatchObject({ state: 'failed', attempts: 4, error: { message: 'final' } });
    expect((await engine.list('failed')).map((t) => t.key)).toEqual([['flaky']]);
    // Operator retry: back to pending with a fresh attempt count.
    await engine.retry(['flaky']);
    const again = await engine.claim();
    expect(again?.attempt).toBe(1);
    await engine.complete(again!, 'done');
    await expect(engine.retry(['flaky'])).rejects.toMatchObject({ code: 'TASK_STATE' });
    await c.close();
  });

  it('cancels a task with its subtree, including a task being worked on', async () => {
    const c = await backend().connect();
    const log = memoryLogger();
    const engine = createEngine(c, { world: worldName(), buckets: 2, logger: log });
    await engine.init();
    await engine.queue({ name: 'top', type: 't' });
    await engine.queue({ name: 'a', type: 't' }, { key: ['top'] });
    await engine.queue({ name: 'b', type: 't' }, { key: ['top', 'a'] });
    await engine.queue({ name: 'keep', type: 't' });
    const claim = await engine.claim({ types: ['t'] });
    const removed = await engine.cancel(['top'], { subtree: true });
    expect(removed.map((k) => k.join('|'))).toEqual(['top|a|b', 'top|a', 'top']);
    expect(await engine.task(['top'])).toBeNull();
    if (claim?.name === 'top') {
      // The cancelled claim can no longer complete: its result is dropped and logged.
      expect((await engine.complete(claim, 1)).status).toBe('dropped');
      expect(log.lines).toContain('result dropped: fenced');
    } else {
      await engine.complete(claim!, 1);
    }
    expect((await engine.tree()).map((n) => n.name)).toEqual(['keep']);
    await expect(engine.cancel(['nope'])).rejects.toMatchObject({ code: 'NO_SUCH_TASK' });
    await c.close();
  });

  it('dead-letters a task whose workers kept dying instead of running it forever', async () => {
    const server = backend();
    const producer = await server.connect();
    const log = memoryLogger();
    const engine = createEngine(producer, { world: worldName(), buckets: 2, logger: log });
    await engine.init();
    await engine.queue({ name: 'poison', type: 't' }, null, null, { maxAttempts: 2 });
    for (let i = 0; i < 2; i++) {
      const w = await server.connect();
      const we = createEngine(w, { world: engine.world, logger: log });
      expect((await we.claim())?.name).toBe('poison');
      await server.expireSession(w);
      await w.close();
    }
    expect(await engine.claim()).toBeNull();
    expect(await engine.task(['poison'])).toMatchObject({
      state: 'failed',
      error: { code: 'WORKER_LOST' },
    });
    await producer.close();
  });
});
