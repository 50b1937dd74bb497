import { createEngine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, TestClock, worldName } from '../engine/helpers.js';

describeOnBackends('engine: order', (backend) => {
  it('claims by priority, then in queue order across buckets', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 16, logger: memoryLogger() });
    await engine.init();
    const plan: Array<[string, number]> = [
      ['low1', -5],
      ['mid1', 0],
      ['high1', 10],
      ['mid2', 0],
      ['low2', -5],
      ['high2', 10],
      ['mid3', 0],
    ];
    for (const [name, priority] of plan)
      await engine.queue({ name, type: 't' }, null, null, { priority });
    const order: string[] = [];
    for (;;) {
      const claim = await engine.claim();
      if (!claim) break;
      order.push(claim.name);
      await engine.complete(claim);
    }
    expect(order).toEqual(['high1', 'high2', 'mid1', 'mid2', 'mid3', 'low1', 'low2']);
    await c.close();
  });

  /**
   * 'first' (priority 20), 'high' (10), 'low' and 'low2' (0) in one bucket; `engine` has
   * claimed 'first', reading every entry, then 'high' was queued again (new data), which
   * renames its entry: the one `engine` read is gone.
   */
  async function requeuedAfterRead() {
    const c = await backend().connect();
    const other = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 1, logger: memoryLogger() });
    const producer = createEngine(other, { world, buckets: 1, logger: memoryLogger() });
    await engine.init();
    await producer.queue({ name: 'first', type: 't' }, null, null, { priority: 20 });
    await producer.queue({ name: 'high', type: 't', data: 'old' }, null, null, { priority: 10 });
    await producer.queue({ name: 'low', type: 't' });
    await producer.queue({ name: 'low2', type: 't' });
    expect((await engine.claim())?.name).toBe('first');
    await producer.queue({ name: 'high', type: 't', data: 'new' }, null, null, { priority: 10 });
    return { engine, close: () => Promise.all([c.close(), other.close()]) };
  }

  it('a task queued again after the claimer read it keeps its place: a lower one does not pass it', async () => {
    const { engine, close } = await requeuedAfterRead();
    const next = await engine.claim();
    expect(next?.name).toBe('high');
    expect(next?.data).toBe('new');
    expect((await engine.claim())?.name).toBe('low');
    await close();
  });

  it('... nor inside a claim group: the group refused for its old entry claims no lower one', async () => {
    const { engine, close } = await requeuedAfterRead();
    const claims = await engine.claimMany(2);
    expect(claims.map((c) => [c.name, c.data])).toEqual([
      ['high', 'new'],
      ['low', undefined],
    ]);
    expect((await engine.claim())?.name).toBe('low2');
    await close();
  });

  it('prefers a task hinted to this worker and holds one hinted to another for a while', async () => {
    const c = await backend().connect();
    const clock = new TestClock();
    const engine = createEngine(c, {
      world: worldName(),
      buckets: 4,
      clock,
      logger: memoryLogger(),
    });
    await engine.init();
    await engine.queue({ name: 'elsewhere', type: 't' }, null, null, {
      hints: { server: 'hostB' },
    });
    await engine.queue({ name: 'plain', type: 't' });
    await engine.queue({ name: 'mine', type: 't' }, null, null, { hints: { server: 'hostA' } });
    const opts = { worker: 'A', server: 'hostA', localityWaitMs: 5000 };
    const first = await engine.claim(opts);
    expect(first?.name).toBe('mine');
    const second = await engine.claim(opts);
    expect(second?.name).toBe('plain');
    expect(await engine.claim(opts)).toBeNull();
    clock.advance(5001);
    expect((await engine.claim(opts))?.name).toBe('elsewhere');
    await c.close();
  });

  it('rejects bad input with a clear error naming the field', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 2, logger: memoryLogger() });
    await engine.init();
    await expect(engine.queue({ name: 'a b', type: 't' })).rejects.toMatchObject({
      code: 'INVALID_TASK',
      field: 'name',
    });
    await expect(
      engine.queue({ name: 'a', type: 't' }, null, null, { priority: 1.5 }),
    ).rejects.toMatchObject({ code: 'INVALID_TASK', field: 'options.priority' });
    await expect(
      engine.queue({ name: 'a', type: 't' }, null, null, { maxAttempts: 0 }),
    ).rejects.toMatchObject({ code: 'INVALID_TASK', field: 'options.maxAttempts' });
    await expect(
      engine.queue({ name: 'a', type: 't' }, { key: ['missing'] }),
    ).rejects.toMatchObject({ code: 'NO_SUCH_TASK' });
    expect(() => createEngine(c, { world: 'p' })).toThrow(/reserved/);
    await expect(
      createEngine(c, { world: worldName() }).queue({ name: 'a', type: 't' }),
    ).rejects.toMatchObject({
      code: 'WORLD_NOT_INITIALISED',
    });
    await c.close();
  });
});
