import {
  type Coordinator,
  createEngine,
  type Engine,
  runWorker,
  type TaskEnd,
  type WaitingState,
} from '@zoott/core';
import { describeOnBackends, freshChroot } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { startProxy } from '@zoott/zk-testkit';
import { describe, expect, expectTypeOf, inject, it } from 'vitest';
import { counting, eventually, memoryLogger, worldName } from './helpers.js';

// engine.waitFor: a promise for one task's end, for a task queued by another session.

interface Files {
  fetch: { data: { url: string }; result: { bytes: number } };
  parse: { result: string[] };
}

const quiet = memoryLogger();
const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };

/** A producer engine and a waiting engine, each on its own session, over a fresh world. */
async function twoSessions(connect: () => Promise<Coordinator>, waiterC?: Coordinator) {
  const world = worldName('wait');
  const producerC = await connect();
  const producer = createEngine<Files>(producerC, { world, buckets: 4, logger: quiet });
  await producer.init();
  const waiterCoordinator = waiterC ?? (await connect());
  const waiter = createEngine<Files>(waiterCoordinator, { world, logger: quiet });
  return { world, producer, producerC, waiter, waiterC: waiterCoordinator };
}

/** Runs every task of `world` with the given handler results until stopped. */
function work(c: Coordinator, world: string, fetch: (attempt: number) => unknown) {
  return runWorker(
    c,
    { fetch: (t) => fetch(t.attempt) as { bytes: number }, parse: () => ['a'] },
    { world, logger: quiet, ...fast },
  );
}

describeOnBackends('engine: waitFor one task', (backend) => {
  it('resolves with the typed result of a task another session queued and ran', async () => {
    const { world, producer, waiter } = await twoSessions(() => backend().connect());
    const [task] = await producer.queue({ name: 'f', type: 'fetch', data: { url: 'u' } });
    const states: WaitingState[] = [];
    const ending = waiter.waitFor(task!, { onState: (s) => states.push(s) });
    await eventually(() => states.length === 1);
    const worker = work(await backend().connect(), world, () => ({ bytes: 42 }));
    const end = await ending;
    await worker.stop();
    expectTypeOf(end).toEqualTypeOf<TaskEnd<Files>>();
    expect(end).toMatchObject({ state: 'completed', key: ['f'], type: 'fetch', attempts: 1 });
    if (end.state === 'completed' && end.type === 'fetch') {
      expectTypeOf(end.result).toEqualTypeOf<{ bytes: number }>();
      expect(end.result.bytes).toBe(42);
    }
    expect(states[0]).toEqual({ state: 'pending', attempt: 1 });
    // Seen pending, then (when the watch caught the claim) working.
    expect(states.every((s) => s.attempt === 1)).toBe(true);
  });

  it('resolves only at the dead letter, with its error; a retry is no end', async () => {
    const { world, producer, waiter } = await twoSessions(() => backend().connect());
    await producer.queue({
      name: 'f',
      type: 'fetch',
      data: { url: 'u' },
      maxAttempts: 2,
      backoff: { baseMs: 0, maxMs: 0 },
    });
    const ending = waiter.waitFor(['f']);
    const worker = work(await backend().connect(), world, (attempt) => {
      throw Object.assign(new Error(`attempt ${attempt} broke`), { code: 'EBROKE' });
    });
    const end = await ending;
    await worker.stop();
    expect(end).toMatchObject({
      state: 'failed',
      type: 'fetch',
      attempts: 2,
      error: { code: 'EBROKE', message: 'attempt 2 broke' },
    });
  });

  it('a cancel ends it as cancelled, pending or working', async () => {
    const { world, producer, waiter } = await twoSessions(() => backend().connect());
    await producer.queue({ name: 'p', type: 'parse' });
    const pending = waiter.waitFor(['p']);
    await producer.cancel(['p']);
    expect(await pending).toEqual({ state: 'cancelled', key: ['p'] });

    await producer.queue({ name: 'w', type: 'fetch', data: { url: 'u' } });
    const states: WaitingState[] = [];
    const working = waiter.waitFor(['w'], { onState: (s) => states.push(s) });
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const worker = work(await backend().connect(), world, async () => {
      await held;
      return { bytes: 1 };
    });
    await eventually(() => states.some((s) => s.state === 'working'));
    await producer.cancel(['w']);
    expect(await working).toEqual({ state: 'cancelled', key: ['w'] });
    release();
    await worker.stop();
  });

  it('an ended task at once; no such task, a timeout and an abort reject', async () => {
    const { world, producer, waiter } = await twoSessions(() => backend().connect());
    await producer.queue({ name: 'f', type: 'fetch', data: { url: 'u' } });
    const worker = work(await backend().connect(), world, () => ({ bytes: 7 }));
    await eventually(async () => (await producer.counts()).completed === 1);
    await worker.stop();
    expect(await waiter.waitFor(['f'])).toMatchObject({ state: 'completed', result: { bytes: 7 } });
    await expect(waiter.waitFor(['nope'])).rejects.toMatchObject({ code: 'NO_SUCH_TASK' });
    await producer.queue({ name: 'idle', type: 'parse' });
    await expect(waiter.waitFor(['idle'], { timeoutMs: 50 })).rejects.toMatchObject({
      code: 'WAIT_TIMEOUT',
      message: expect.stringMatching(/task idle did not end within 50 ms/),
    });
    const abort = new AbortController();
    const aborted = waiter.waitFor(['idle'], { signal: abort.signal });
    abort.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('costs one watch: other tasks running meanwhile wake it not once; no polling', async () => {
    const raw = await backend().connect();
    const { c, counts } = counting(raw);
    const { world, producer, waiter } = await twoSessions(() => backend().connect(), c);
    // The waited task sits behind a parent that runs last: its bucket is a busy one.
    await producer.queue({ name: 'root', type: 'parse' });
    await producer.queue({
      name: 'f',
      type: 'fetch',
      data: { url: 'u' },
      parent: { key: ['root'] },
    });
    const states: WaitingState[] = [];
    const ending = waiter.waitFor(['root', 'f'], { onState: (s) => states.push(s) });
    await eventually(() => states.length === 1);
    const afterFirstLook = counts.reads + counts.writes;
    // Much happens elsewhere, in the same bucket and others: 200 tasks queued and run.
    await producer.queueMany(
      Array.from({ length: 200 }, (_, i) => ({
        name: `other${i}`,
        type: 'parse' as const,
        parent: i % 2 === 0 ? { key: ['root'] } : null,
      })),
    );
    const worker = runWorker(
      await backend().connect(),
      { parse: () => ['x'] },
      {
        world,
        logger: quiet,
        concurrency: 8,
        ...fast,
      },
    );
    await eventually(async () => (await producer.counts()).completed >= 201, 60_000);
    expect(counts.reads + counts.writes).toBe(afterFirstLook);
    await worker.stop();
    // Then the task itself runs: a few reads per transition of it, no more.
    const runner = work(await backend().connect(), world, () => ({ bytes: 1 }));
    expect(await ending).toMatchObject({ state: 'completed', result: { bytes: 1 } });
    await runner.stop();
    expect(counts.writes).toBe(0);
    expect(counts.reads - afterFirstLook).toBeLessThanOrEqual(8);
  });

  it('rides out a dropped connection and a lost session (once renewed)', async () => {
    const { world, producer, waiter, waiterC } = await twoSessions(() => backend().connect());
    await producer.queue({ name: 'a', type: 'fetch', data: { url: 'u' } });
    await producer.queue({ name: 'b', type: 'fetch', data: { url: 'u' } });
    const states: WaitingState[] = [];
    const a = waiter.waitFor(['a'], { onState: (s) => states.push(s) });
    const b = waiter.waitFor(['b']);
    await eventually(() => states.length === 1);
    await backend().dropConnection(waiterC);
    await backend().expireSession(waiterC);
    const worker = work(await backend().connect(), world, () => ({ bytes: 3 }));
    await eventually(async () => (await producer.counts()).completed === 2);
    await worker.stop();
    // The owner of the coordinator renews its session; the waits read the task again.
    await waiterC.renewSession();
    expect(await a).toMatchObject({ state: 'completed', result: { bytes: 3 } });
    expect(await b).toMatchObject({ state: 'completed', result: { bytes: 3 } });
  });
});

describe('engine: waitFor across a partition [zookeeper]', () => {
  it('a task that completes while the waiter hears nothing ends the wait once it is back', async () => {
    const server = inject('zkConnect');
    const { chroot } = await freshChroot(server, 'waitloss');
    const proxy = await startProxy(server);
    const waiterC = await connectZk(`${proxy.hostPort}${chroot}`, { sessionTimeoutMs: 20_000 });
    let producer: Engine<Files> | null = null;
    try {
      const s = await twoSessions(() => connectZk(`${server}${chroot}`), waiterC);
      producer = s.producer;
      await s.producer.queue({ name: 'f', type: 'fetch', data: { url: 'u' } });
      const states: WaitingState[] = [];
      const ending = s.waiter.waitFor(['f'], { onState: (st) => states.push(st) });
      await eventually(() => states.length === 1);
      proxy.setPartitioned(true);
      await eventually(() => waiterC.state === 'suspended', 30_000);
      const worker = work(await connectZk(`${server}${chroot}`), s.world, () => ({ bytes: 9 }));
      await eventually(async () => (await s.producer.counts()).completed === 1, 30_000);
      await worker.stop();
      proxy.setPartitioned(false);
      expect(await ending).toMatchObject({ state: 'completed', result: { bytes: 9 } });
      await s.producerC.close();
    } finally {
      void producer;
      await waiterC.close();
      await proxy.close();
    }
  });
});
