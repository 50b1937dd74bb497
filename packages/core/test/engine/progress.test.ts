import { createEngine, type EngineEvent, runWorker, ZoottError } from '@zoott/core';
import { MAX_LOG_LINE_CHARS, MAX_LOG_LINES, progressPath } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from './helpers.js';

const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

describeOnBackends('engine: progress and logs of running tasks', (backend) => {
  it('is stored, streamed by events({ progress }), and kept after completion', async () => {
    const producer = await backend().connect();
    const world = worldName('pg');
    const engine = createEngine(producer, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    const events: EngineEvent[] = [];
    const stop = new AbortController();
    const stream = (async () => {
      for await (const e of engine.events({ signal: stop.signal, progress: true })) events.push(e);
    })();
    await engine.queue({ name: 'job', type: 't' });
    const wc = await backend().connect();
    const half = gate();
    const worker = runWorker(
      wc,
      {
        t: async (task) => {
          task.progress(0.5);
          task.log('downloaded 5 of 10');
          await half.opened;
          task.progress({ done: 10, of: 10 });
          task.log('all done');
          return 'ok';
        },
      },
      { world, logger: memoryLogger(), ...fast },
    );
    await eventually(() => events.some((e) => e.type === 'progress'));
    const first = events.find((e) => e.type === 'progress')!;
    expect(first).toMatchObject({
      key: ['job'],
      world,
      progress: { attempt: 1, progress: 0.5, log: [{ line: 'downloaded 5 of 10' }], dropped: 0 },
    });
    expect(await engine.progress(['job'])).toMatchObject({ progress: 0.5, worker: worker.id });

    half.open();
    await eventually(() => events.some((e) => e.type === 'completed'));
    // The last report lands before the completion, so the completed task shows it.
    expect(await engine.progress(['job'])).toMatchObject({
      progress: { done: 10, of: 10 },
      log: [{ line: 'downloaded 5 of 10' }, { line: 'all done' }],
    });
    // The completion took the report into its record and deleted the node: no leftover.
    const layout = (await engine.context()).layout;
    expect(await producer.exists(progressPath(layout, ['job']))).toBeNull();
    const last = events.filter((e) => e.type === 'progress').at(-1);
    expect(last?.progress?.log.at(-1)?.line).toBe('all done');
    stop.abort();
    await stream;
    await worker.stop();
    await Promise.all([producer.close(), wc.close()]);
  });

  it('keeps a bounded log, coalesces bursts into few writes, refuses bad values', async () => {
    const producer = await backend().connect();
    const world = worldName('pb');
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'chatty', type: 't' });
    const wc = await backend().connect();
    const node = progressPath((await engine.context()).layout, ['chatty']);
    // Writes that landed on the task's progress node (a create that found no parents yet
    // and was made again after them counts once).
    const writes: string[] = [];
    for (const m of ['create', 'set'] as const) {
      const original = wc[m].bind(wc) as (...a: unknown[]) => Promise<unknown>;
      (wc as unknown as Record<string, unknown>)[m] = async (path: string, ...rest: unknown[]) => {
        const out = await original(path, ...rest);
        if (path === node) writes.push(m);
        return out;
      };
    }
    let refusal: unknown = null;
    const worker = runWorker(
      wc,
      {
        t: (task) => {
          // One burst, all before the first write can go out.
          for (let i = 1; i <= 120; i++) {
            task.progress(i / 120);
            task.log(i === 120 ? 'x'.repeat(2000) : `line ${i}`);
          }
          try {
            task.progress({ blob: 'y'.repeat(5000) });
          } catch (err) {
            refusal = err;
          }
          return null;
        },
      },
      { world, logger: memoryLogger(), ...fast },
    );
    await new Promise<void>((r) => worker.once('drained', () => r()));
    await worker.stop();
    expect(refusal).toMatchObject({
      code: 'INVALID_TASK',
      message: expect.stringMatching(/^INVALID_TASK: progress: JSON encoding is \d+ bytes/),
    });
    const p = await engine.progress(['chatty']);
    expect(p?.progress).toBe(1);
    expect(p?.log).toHaveLength(MAX_LOG_LINES);
    expect(p?.dropped).toBe(120 - MAX_LOG_LINES);
    expect(p?.log[0]?.line).toBe(`line ${120 - MAX_LOG_LINES + 1}`);
    expect(p?.log.at(-1)?.line).toHaveLength(MAX_LOG_LINE_CHARS);
    // 240 reports, one write (the flush before the outcome had nothing new).
    expect(writes).toEqual(['create']);
    await Promise.all([producer.close(), wc.close()]);
  });

  it('a task that reports nothing writes no progress node; cancel removes one', async () => {
    const producer = await backend().connect();
    const world = worldName('pc');
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'quiet', type: 'q' });
    await engine.queue({ name: 'loud', type: 'l' });
    const wc = await backend().connect();
    const worker = runWorker(
      wc,
      {
        q: () => 1,
        l: (task) =>
          new Promise((resolve) => {
            task.log('started');
            task.signal.addEventListener('abort', () => resolve(0));
          }),
      },
      { world, concurrency: 2, logger: memoryLogger(), ...fast },
    );
    await eventually(async () => (await engine.progress(['loud'])) !== null);
    await eventually(async () => (await engine.task(['quiet']))?.state === 'completed');
    expect(await engine.progress(['quiet'])).toBeNull();
    await engine.cancel(['loud']);
    const ctx = await engine.context();
    expect(await producer.exists(progressPath(ctx.layout, ['loud']))).toBeNull();
    await worker.stop();
    await Promise.all([producer.close(), wc.close()]);
  });

  it("a retried task reports again: the failed run's progress node does not stop the next run", async () => {
    const producer = await backend().connect();
    const world = worldName('pr');
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    // Two attempts: the node left by the dead-lettered run says attempt 2, and a retry
    // starts the count again at 1.
    await engine.queue({ name: 'job', type: 't' }, null, null, {
      maxAttempts: 2,
      backoff: { baseMs: 0, maxMs: 0 },
    });
    const wc = await backend().connect();
    let runs = 0;
    const worker = runWorker(
      wc,
      {
        t: async (task) => {
          runs += 1;
          task.log(`run ${runs}`);
          if (runs <= 2) throw new Error(`run ${runs} fails`);
          return 'ok';
        },
      },
      { world, concurrency: 1, logger: memoryLogger(), ...fast },
    );
    await eventually(async () => (await engine.task(['job']))?.state === 'failed');
    expect(await engine.progress(['job'])).toMatchObject({ attempt: 2 });
    await engine.retry(['job']);
    await eventually(async () => (await engine.task(['job']))?.state === 'completed');
    const report = await engine.progress(['job']);
    expect(report).toMatchObject({ attempt: 1 });
    expect(report?.log.map((l) => l.line)).toEqual(['run 3']);
    await worker.stop();
    await Promise.all([producer.close(), wc.close()]);
  });

  it('a report whose progress node could not be written is still the completed record’s', async () => {
    const producer = await backend().connect();
    const world = worldName('pw');
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'job', type: 't' });
    const node = progressPath((await engine.context()).layout, ['job']);
    const raw = await backend().connect();
    // Every write of the progress node fails (a connection that drops it, say): the report
    // has no node to remove, so the completion carries no extra op.
    let refused = 0;
    const wc = new Proxy(raw, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'create' && prop !== 'set') return value;
        return (path: string, ...rest: unknown[]) => {
          if (path !== node)
            return (value as (...a: unknown[]) => unknown).call(target, path, ...rest);
          refused++;
          return Promise.reject(new ZoottError('CONNECTION_LOSS', 'dropped', { path }));
        };
      },
    });
    const worker = runWorker(
      wc,
      {
        t: (task) => {
          task.log('working');
          return 'ok';
        },
      },
      { world, concurrency: 1, logger: memoryLogger(), ...fast },
    );
    await eventually(async () => (await engine.task(['job']))?.state === 'completed');
    await worker.stop();
    expect(refused).toBeGreaterThan(0);
    expect(await producer.exists(node)).toBeNull();
    expect((await engine.progress(['job']))?.log.map((l) => l.line)).toEqual(['working']);
    await Promise.all([producer.close(), raw.close()]);
  });

  it("a completion whose extra ops were dropped still removes the run's progress node", async () => {
    const producer = await backend().connect();
    const world = worldName('pd');
    const engine = createEngine(producer, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'job', type: 't' });
    const wc = await backend().connect();
    const worker = runWorker(
      wc,
      {
        t: (task) => {
          task.log('working');
          return 'ok';
        },
      },
      {
        world,
        concurrency: 1,
        logger: memoryLogger(),
        ...fast,
        // A reply op that cannot apply (its parent does not exist): the completion drops its
        // extra ops, the progress node's delete among them, and records the result without.
        engineOptions: {
          completionOps: async () => [{ op: 'create', path: '/no-such-parent/reply' }],
        },
      },
    );
    await eventually(async () => (await engine.task(['job']))?.state === 'completed');
    await worker.stop();
    const ctx = await engine.context();
    expect(await producer.exists(progressPath(ctx.layout, ['job']))).toBeNull();
    // The report is the completed record's.
    expect((await engine.progress(['job']))?.log.map((l) => l.line)).toEqual(['working']);
    await Promise.all([producer.close(), wc.close()]);
  });
});

// The throttle, on a clock whose sleeps end only when the test says so.
it('writes at most once per interval: later reports wait for the interval to pass', async () => {
  const { MemoryServer } = await import('@zoott/memory-adapter');
  const { ProgressWriter } = await import('@zoott/core/internal');
  const sleeps: { ms: number; wake: () => void }[] = [];
  const clock = {
    now: () => 1_000,
    random: () => 0.5,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve) => {
        if (ms === 0) return resolve();
        sleeps.push({ ms, wake: resolve });
        signal?.addEventListener('abort', () => resolve(), { once: true });
      }),
  };
  const c = await new MemoryServer().connect();
  const engine = createEngine(c, {
    world: worldName('pt'),
    buckets: 1,
    clock,
    logger: memoryLogger(),
  });
  await engine.init();
  await engine.queue({ name: 'a', type: 't' });
  const claim = (await engine.claim())!;
  const ctx = await engine.context();
  const writer = new ProgressWriter(ctx, claim, 500);
  const stored = async () => (await engine.progress(['a']))?.progress;
  writer.progress(1);
  await eventually(async () => (await stored()) === 1);
  writer.progress(2);
  writer.progress(3);
  await eventually(() => sleeps.length === 1);
  expect(sleeps[0]?.ms).toBe(500);
  // Nothing more is written while the interval runs.
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  expect(await stored()).toBe(1);
  sleeps[0]!.wake();
  await eventually(async () => (await stored()) === 3);
  writer.progress(4);
  await writer.flush();
  expect(await stored()).toBe(4);
  await c.close();
});
