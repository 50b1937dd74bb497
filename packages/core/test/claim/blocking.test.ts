import { createEngine, type Engine } from '@zoott/core';
import { cleanFailed } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, TestClock, worldName } from '../engine/helpers.js';

/** Claims and completes until nothing is runnable; returns the keys in run order. */
async function drain(engine: Engine): Promise<string[]> {
  const order: string[] = [];
  for (;;) {
    const claim = await engine.claim();
    if (!claim) return order;
    order.push(claim.key.join('|'));
    await engine.complete(claim, null);
  }
}

describeOnBackends('engine: blocking', (backend) => {
  it('never starts a child before every queued ancestor completed', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 4, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'root', type: 'r' });
    await engine.queue({ name: 'mid', type: 'm' }, { key: ['root'] });
    await engine.queue({ name: 'leaf', type: 'l' }, { key: ['root', 'mid'] });
    await engine.queue({ name: 'other', type: 'r' });
    // Only the two roots are runnable at first.
    const a = await engine.claim();
    const b = await engine.claim();
    expect(new Set([a?.key.join('|'), b?.key.join('|')])).toEqual(new Set(['root', 'other']));
    expect(await engine.claim()).toBeNull();
    // While root is working, mid stays blocked; once it completes mid runs, then leaf.
    const rootClaim = a?.key[0] === 'root' ? a! : b!;
    await engine.complete(rootClaim, 1);
    const mid = await engine.claim();
    expect(mid?.key).toEqual(['root', 'mid']);
    expect(await engine.claim()).toBeNull();
    await engine.complete(mid!, 2);
    expect((await engine.claim())?.key).toEqual(['root', 'mid', 'leaf']);
    await c.close();
  });

  it('queues a child under every parent matching name and type patterns', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 8, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'requestFile_alpha', type: 'request' });
    await engine.queue({ name: 'requestFile_beta', type: 'request' });
    await engine.queue({ name: 'requestFile_gamma', type: 'other' });
    const queued = await engine.queue(
      { name: 'download', type: 'download' },
      { name: 'requestFile_.*', type: 'request' },
      (parent, child) => `${child}_${parent.split('_')[1]}`,
    );
    expect(queued.map((q) => q.key.join('|')).sort()).toEqual([
      'requestFile_alpha|download_alpha',
      'requestFile_beta|download_beta',
    ]);
    expect(await engine.queue({ name: 'x', type: 'x' }, { name: 'nothing' })).toEqual([]);
    const order = await drain(engine);
    for (const child of ['alpha', 'beta']) {
      expect(order.indexOf(`requestFile_${child}|download_${child}`)).toBeGreaterThan(
        order.indexOf(`requestFile_${child}`),
      );
    }
    expect(order).toHaveLength(5);
    await c.close();
  });

  it('keeps descendants blocked behind a failed ancestor until it is retried', async () => {
    const c = await backend().connect();
    const clock = new TestClock();
    const engine = createEngine(c, {
      world: worldName(),
      buckets: 2,
      clock,
      logger: memoryLogger(),
    });
    await engine.init();
    await engine.queue({ name: 'p', type: 't' }, null, null, { maxAttempts: 1 });
    await engine.queue({ name: 'child', type: 't' }, { key: ['p'] });
    const p = await engine.claim();
    expect(await engine.fail(p!, new Error('boom'))).toMatchObject({
      status: 'failed',
      error: { code: 'HANDLER_ERROR', message: 'boom' },
    });
    expect(await engine.claim()).toBeNull();
    expect((await engine.task(['p']))?.state).toBe('failed');
    expect((await engine.task(['p', 'child']))?.state).toBe('pending');
    await engine.retry(['p']);
    const again = await engine.claim();
    expect(again?.key).toEqual(['p']);
    expect(again?.attempt).toBe(1);
    await engine.complete(again!, 'ok');
    expect((await engine.claim())?.key).toEqual(['p', 'child']);
    await c.close();
  });

  it('refuses to cancel a parent alone, leaving it and its child as they were', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'p', type: 't' }, null, null, { maxAttempts: 1 });
    await engine.queue({ name: 'child', type: 't' }, { key: ['p'] });
    await engine.fail((await engine.claim())!, 'bad');
    await expect(engine.cancel(['p'])).rejects.toMatchObject({
      code: 'TASK_STATE',
      message: expect.stringMatching(/has 1 child task; cancel it with its subtree/),
    });
    const tree = await engine.tree();
    expect(tree).toMatchObject([
      { name: 'p', state: 'failed', children: [{ name: 'child', state: 'pending' }] },
    ]);
    expect(await engine.cancel(['p'], { subtree: true })).toEqual([['p', 'child'], ['p']]);
    expect(await engine.tree()).toEqual([]);
    await c.close();
  });
});

describeOnBackends('engine: blocking after a re-queue', (backend) => {
  it('a cached listing does not let a child start under an ancestor queued again', async () => {
    const c = await backend().connect();
    const wc = await backend().connect();
    const world = worldName();
    const admin = createEngine(c, { world, buckets: 1, logger: memoryLogger() });
    await admin.init();
    await admin.queue({ name: 'b', type: 't' });
    await admin.queue({ name: 'x', type: 't' }, { key: ['b'] });
    const b = await admin.claim({ worker: 'admin' });
    expect(b?.key).toEqual(['b']);
    await admin.complete(b!, null);
    await admin.queue({ name: 'a', type: 't' }, null, null, { priority: 5 });
    // The worker lists the bucket now (b|x runnable; a goes first by priority) and keeps
    // that listing, watched.
    const worker = createEngine(wc, { world, logger: memoryLogger() });
    const a = await worker.claim({ worker: 'w' });
    expect(a?.key).toEqual(['a']);
    // b is queued again. A read on the worker's session after it means the watch event has
    // arrived (ZooKeeper sends a client the event before data that shows the change).
    expect((await admin.queue({ name: 'b', type: 't' }))[0]?.previous).toBe('completed');
    await wc.exists('/');
    // b runs again, and b|x stays blocked until it completes once more.
    const next = await worker.claim({ worker: 'w' });
    expect(next?.key).toEqual(['b']);
    expect(await worker.claim({ worker: 'w' })).toBeNull();
    await worker.complete(next!, null);
    expect((await worker.claim({ worker: 'w' }))?.key).toEqual(['b', 'x']);
    await worker.complete(a!, null);
  });
});

describeOnBackends('engine: cleaning failed tasks leaves a failed parent', (backend) => {
  it('skips a failed task with children instead of leaving them under a stateless node', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'p', type: 't' }, null, null, { maxAttempts: 1 });
    await engine.queue({ name: 'child', type: 't' }, { key: ['p'] });
    await engine.queue({ name: 'lone', type: 't' }, null, null, { maxAttempts: 1 });
    await engine.fail((await engine.claim())!, 'bad');
    await engine.fail((await engine.claim())!, 'bad');
    const report = await cleanFailed(await engine.context());
    expect(report).toMatchObject({ matched: 2, removed: 1, skipped: 1 });
    expect(await engine.task(['lone'])).toBeNull();
    expect(await engine.tree()).toMatchObject([
      { name: 'p', state: 'failed', children: [{ name: 'child', state: 'pending' }] },
    ]);
    await c.close();
  });
});
