import {
  createEngine,
  runWorker,
  type WorkerCompletedEvent,
  type WorkerErrorEvent,
  type WorkerEventMap,
  type WorkerFailedEvent,
} from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';

const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };

interface MathTasks {
  square: { data: number; result: number };
  explode: { data: { why: string }; result: never };
}

/** Every event of a worker, in order, as `[name, payload]`. */
function record<M>(worker: {
  on<E extends keyof WorkerEventMap<M>>(e: E, l: (p: WorkerEventMap<M>[E]) => void): () => void;
}): [keyof WorkerEventMap<M>, unknown][] {
  const seen: [keyof WorkerEventMap<M>, unknown][] = [];
  for (const name of ['completed', 'failed', 'error', 'drained'] as const)
    worker.on(name, (p) => seen.push([name, p]));
  return seen;
}

describeOnBackends('engine: worker handle events', (backend) => {
  it('emits completed and failed per attempt, then drained, typed by the task map', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine<MathTasks>(producer, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    for (let i = 1; i <= 3; i++) await engine.queue({ name: `sq${i}`, type: 'square', data: i });
    await engine.queue({
      name: 'bomb',
      type: 'explode',
      data: { why: 'boom' },
      maxAttempts: 2,
      backoff: { baseMs: 0, maxMs: 0 },
    });
    const wc = await backend().connect();
    const worker = runWorker<MathTasks>(
      wc,
      {
        square: (t) => t.data * t.data,
        explode: (t) => {
          throw new Error(t.data.why);
        },
      },
      { world, concurrency: 2, logger: memoryLogger(), ...fast },
    );
    const seen = record<MathTasks>(worker);
    const squares = new Map<string, number>();
    worker.on('completed', (e) => {
      // The map narrows the result by type: a square's result is a number.
      if (e.type === 'square') squares.set(e.name, e.result + 0);
    });
    await eventually(() =>
      seen.some(([n, p]) => {
        const s = (p as WorkerEventMap['drained']).stats;
        return n === 'drained' && s.completed === 3 && s.failed === 1;
      }),
    );
    await worker.stop();

    expect(squares).toEqual(
      new Map([
        ['sq1', 1],
        ['sq2', 4],
        ['sq3', 9],
      ]),
    );
    const completed = seen.filter(([n]) => n === 'completed').map(([, p]) => p);
    expect(completed).toHaveLength(3);
    expect(completed).toContainEqual({
      key: ['sq2'],
      name: 'sq2',
      type: 'square',
      data: 2,
      attempt: 1,
      result: 4,
    } satisfies WorkerCompletedEvent<MathTasks>);
    const failed = seen
      .filter(([n]) => n === 'failed')
      .map(([, p]) => p as WorkerFailedEvent<MathTasks>);
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({
      key: ['bomb'],
      type: 'explode',
      data: { why: 'boom' },
      attempt: 1,
      final: false,
      error: { message: 'boom' },
    });
    expect(typeof failed[0]?.notBefore).toBe('number');
    expect(failed[1]).toMatchObject({ key: ['bomb'], attempt: 2, final: true });
    expect(failed[1]).not.toHaveProperty('notBefore');
    expect(seen.filter(([n]) => n === 'error')).toEqual([]);
    // The last event is the drain after the last attempt, with the final counts.
    expect(seen.at(-1)).toEqual([
      'drained',
      { stats: { claimed: 5, completed: 3, retried: 1, failed: 1, dropped: 0 } },
    ]);
    await Promise.all([producer.close(), wc.close()]);
  });

  it('emits error with the key when a result is dropped because the session was lost', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'slow', type: 't' });
    const wc = await backend().connect();
    let started = false;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const worker = runWorker(
      wc,
      {
        t: async () => {
          started = true;
          await gate;
          return 'late';
        },
      },
      { world, renewSession: false, logger: memoryLogger(), ...fast },
    );
    const errors: WorkerErrorEvent[] = [];
    worker.on('error', (e) => errors.push(e));
    const completed: unknown[] = [];
    worker.on('completed', (e) => completed.push(e));
    await eventually(() => started);
    await backend().expireSession(wc);
    release();
    await eventually(() => errors.length > 0);
    expect(errors[0]).toMatchObject({ key: ['slow'] });
    expect(errors[0]?.message).toMatch(/slow not recorded: session lost/);
    expect(completed).toEqual([]);
    expect(worker.stats.dropped).toBe(1);
    await worker.stop();
    await producer.close();
  });
});

it('emits error and rejects done with the same error when the worker cannot start', async () => {
  const zk = await new MemoryServer().connect();
  // The world was never initialised: the worker stops at once.
  const worker = runWorker(zk, { t: () => 1 }, { world: worldName(), logger: memoryLogger() });
  const errors: WorkerErrorEvent[] = [];
  worker.on('error', (e) => errors.push(e));
  const fatal = await worker.done.then(
    () => null,
    (err: unknown) => err,
  );
  expect(fatal).toMatchObject({ code: 'WORLD_NOT_INITIALISED' });
  expect(errors).toHaveLength(1);
  expect(errors[0]?.error).toBe(fatal);
  expect(errors[0]?.message).toMatch(/^worker stopped: .*not initialised/);
  // Without an `error` listener nothing is thrown (unlike an EventEmitter): only done rejects.
  const bare = runWorker(zk, { t: () => 1 }, { world: worldName(), logger: memoryLogger() });
  await expect(bare.done).rejects.toMatchObject({ code: 'WORLD_NOT_INITIALISED' });
  await zk.close();
});

it('survives a throwing listener and honours once, off and unsubscribe', async () => {
  const zk = await new MemoryServer().connect();
  const world = worldName();
  const engine = createEngine(zk, { world, buckets: 1 });
  await engine.init();
  const logger = memoryLogger();
  const worker = runWorker(zk, { t: (task) => task.name }, { world, logger, ...fast });
  worker.on('completed', () => {
    throw new Error('listener bug');
  });
  const onceSeen: unknown[] = [];
  worker.once('completed', (e) => onceSeen.push(e.result));
  const offSeen: unknown[] = [];
  const listener = (e: { result: unknown }) => offSeen.push(e.result);
  worker.on('completed', listener);
  worker.off('completed', listener);
  const allSeen: unknown[] = [];
  const unsubscribe = worker.on('completed', (e) => allSeen.push(e.result));
  const order: string[] = [];
  worker.on('completed', () => order.push('completed'));
  worker.on('drained', () => order.push('drained'));
  // A worker on an empty world is `drained` once it has looked and found nothing.
  await eventually(() => order.includes('drained'));
  await eventually(() => worker.buckets.length === 1);
  await eventually(async () => (await zk.children(`/zoott_workers/${world}`)).length === 1);
  await engine.queue({ name: 'a', type: 't' });
  await eventually(() => allSeen.length === 1);
  await engine.queue({ name: 'b', type: 't' });
  await eventually(() => allSeen.length === 2);
  unsubscribe();
  await engine.queue({ name: 'c', type: 't' });
  await eventually(async () => (await engine.counts()).completed === 3);
  await worker.stop();
  expect(onceSeen).toEqual(['a']);
  expect(offSeen).toEqual([]);
  expect(allSeen).toEqual(['a', 'b']);
  expect(order[0]).toBe('drained');
  expect(order[1]).toBe('completed');
  expect(worker.stats.completed).toBe(3);
  expect(logger.lines.filter((l) => l === 'worker event listener threw')).toHaveLength(3);
  await zk.close();
});
