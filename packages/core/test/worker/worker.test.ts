import { createEngine, runWorker } from '@zoott/core';
import { fnv1a32 } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, TestClock, worldName } from '../engine/helpers.js';

const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };

describeOnBackends('engine: worker loop', (backend) => {
  it('runs handlers by type with concurrency and leaves unsupported types', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    for (let i = 0; i < 12; i++) await engine.queue({ name: `sq${i}`, type: 'square', data: i });
    await engine.queue({ name: 'alien', type: 'unknown' });
    const wc = await backend().connect();
    let running = 0;
    let peak = 0;
    const results = new Map<string, unknown>();
    const worker = runWorker(
      wc,
      {
        square: async (t) => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 5));
          running--;
          results.set(t.name, (t.data as number) ** 2);
          return (t.data as number) ** 2;
        },
      },
      { world, concurrency: 3, logger: memoryLogger(), ...fast },
    );
    await eventually(async () => (await engine.counts()).completed === 12);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThan(1);
    expect(await engine.task(['sq3'])).toMatchObject({ result: 9, state: 'completed' });
    expect((await engine.task(['alien']))?.state).toBe('pending');
    await worker.stop();
    expect(worker.registryPath).toBeNull();
    expect(await producer.children(`/zoott_workers/${world}`)).toEqual([]);
    await Promise.all([producer.close(), wc.close()]);
  });

  it('stops when handlers outlive the grace and end one after another, giving their claims back', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    for (let i = 0; i < 3; i++) await engine.queue({ name: `slow${i}`, type: 't' });
    const wc = await backend().connect();
    let started = 0;
    // Deaf to the abort at first: each ends a different time after it, on a timer. A
    // completion wakes the stopping worker while the others still need the event loop. (A
    // stop whose wait turned into a loop on settled promises failed this as a hang: nothing,
    // the test's own timeout included, ran again.)
    const worker = runWorker(
      wc,
      {
        t: (task) =>
          new Promise((resolve) => {
            const i = started++;
            task.signal.addEventListener('abort', () => setTimeout(resolve, 10 + 60 * i));
          }),
      },
      { world, concurrency: 3, logger: memoryLogger(), ...fast, stopTimeoutMs: 30 },
    );
    await eventually(() => started === 3);
    await worker.stop();
    expect(worker.stats).toMatchObject({ completed: 0, failed: 0 });
    const n = await engine.counts();
    expect(n).toMatchObject({ pending: 3, working: 0, completed: 0 });
    await Promise.all([producer.close(), wc.close()]);
  });

  it('records handler errors as failed attempts with retries', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'flaky', type: 't' }, null, null, {
      maxAttempts: 3,
      backoff: { baseMs: 1, maxMs: 5 },
    });
    await engine.queue({ name: 'doomed', type: 't' }, null, null, {
      maxAttempts: 2,
      backoff: { baseMs: 1, maxMs: 5 },
    });
    const wc = await backend().connect();
    const worker = runWorker(
      wc,
      {
        t: (task) => {
          if (task.name === 'doomed') throw new Error('always');
          if (task.attempt < 3) throw new Error(`attempt ${task.attempt}`);
          return task.attempt;
        },
      },
      { world, logger: memoryLogger(), ...fast },
    );
    await eventually(async () => {
      const n = await engine.counts();
      return n.completed === 1 && n.failed === 1;
    });
    expect(await engine.task(['flaky'])).toMatchObject({ result: 3, attempts: 3 });
    expect(await engine.task(['doomed'])).toMatchObject({
      attempts: 2,
      error: { message: 'always' },
    });
    expect(worker.stats).toMatchObject({ completed: 1, failed: 1, retried: 3 });
    await worker.stop();
    await Promise.all([producer.close(), wc.close()]);
  });

  it('aborts handlers when the session is lost, re-registers, claims the task again, and another worker finishes', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'long', type: 't' });
    const wc = await backend().connect();
    let aborted = false;
    let started = 0;
    const worker = runWorker(
      wc,
      {
        t: (task) =>
          new Promise((_resolve, reject) => {
            started++;
            task.signal.addEventListener('abort', () => {
              aborted = true;
              reject(task.signal.reason);
            });
          }),
      },
      { world, logger: memoryLogger(), ...fast, stopTimeoutMs: 50 },
    );
    await eventually(() => started === 1 && worker.registryPath !== null);
    const firstRegistration = worker.registryPath;
    await backend().expireSession(wc);
    await eventually(() => aborted);
    // It renews its session and registers again.
    await eventually(() => worker.registryPath !== null && wc.state === 'connected');
    expect(worker.registryPath).not.toBe(firstRegistration);
    // The void claim was forgotten with its session: this worker claims the task again.
    await eventually(() => started === 2);
    // Stopping gives that claim back (its attempt is not counted) for the other worker.
    await worker.stop();
    const other = await backend().connect();
    const w2 = runWorker(
      other,
      { t: () => 'finished' },
      { world, logger: memoryLogger(), ...fast },
    );
    await eventually(async () => (await engine.task(['long']))?.state === 'completed');
    expect(await engine.task(['long'])).toMatchObject({ result: 'finished', attempts: 2 });
    await w2.stop();
    await Promise.all([producer.close(), wc.close(), other.close()]);
  });

  it('keeps taking from other buckets while that finds work (a type only it handles)', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const buckets = 8;
    const engine = createEngine(producer, { world, buckets, logger: memoryLogger() });
    await engine.init();
    // The clock moves only by hand: one idle period is allowed, so a worker that stole once
    // and then waited to be idle again would stop after its first batch.
    const clock = new TestClock();
    const opts = { world, logger: memoryLogger(), clock, pollMs: 200, stealAfterMs: 1000 };
    const [ca, cb] = await Promise.all([backend().connect(), backend().connect()]);
    const a = runWorker(ca, { a: () => 'a' }, opts);
    const b = runWorker(cb, { b: () => 'b' }, { ...opts, concurrency: 2 });
    await eventually(() => a.buckets.length + b.buckets.length === buckets && a.buckets.length > 0);
    // Twenty 'b' tasks, all in buckets that the 'a'-only worker owns.
    const names: string[] = [];
    for (let i = 0; names.length < 20; i++)
      if (a.buckets.includes(fnv1a32(`b${i}`) % buckets)) names.push(`b${i}`);
    for (const name of names) await engine.queue({ name, type: 'b' });
    clock.advance(1000);
    // The worker counts a completion after its write returns: wait for its count, not the world's.
    await eventually(() => b.stats.completed === names.length);
    expect((await engine.counts()).completed).toBe(names.length);
    await Promise.all([a.stop(), b.stop()]);
    await Promise.all([producer, ca, cb].map((x) => x.close()));
  });

  it('splits buckets between workers and rebalances when one leaves', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 16, logger: memoryLogger() });
    await engine.init();
    const clients = await Promise.all([1, 2, 3].map(() => backend().connect()));
    const workers = clients.map((x) =>
      runWorker(x, { t: () => 1 }, { world, logger: memoryLogger(), ...fast }),
    );
    // Even shares (16 = 6 + 5 + 5): a worker left with no bucket would only work by stealing.
    // Waited for, not read once: the first worker to register takes all 16 and hands buckets
    // over as the others appear, so 'all 16 owned once' also holds on the way there.
    const shares = () => workers.map((w) => w.buckets.length).sort((a, b) => a - b);
    await eventually(() => {
      const all = workers.flatMap((w) => [...w.buckets]);
      return all.length === 16 && new Set(all).size === 16 && shares().join() === '5,5,6';
    });
    expect(shares()).toEqual([5, 5, 6]);
    await workers[0]!.stop();
    await eventually(() => {
      const all = workers.slice(1).flatMap((w) => [...w.buckets]);
      return all.length === 16 && new Set(all).size === 16;
    });
    expect(workers.slice(1).map((w) => w.buckets.length)).toEqual([8, 8]);
    for (let i = 0; i < 20; i++) await engine.queue({ name: `t${i}`, type: 't' });
    await eventually(async () => (await engine.counts()).completed === 20);
    await Promise.all(workers.slice(1).map((w) => w.stop()));
    await Promise.all([producer, ...clients].map((x) => x.close()));
  });
});
