import {
  type Coordinator,
  createEngine,
  type Engine,
  type EngineEvent,
  type EngineEventType,
  runWorker,
} from '@zoott/core';
import { describeOnBackends, freshChroot } from '@zoott/testing';
import { connectZk, killSession, type ZkCoordinator } from '@zoott/zk-adapter';
import { startProxy } from '@zoott/zk-testkit';
import { describe, expect, inject, it } from 'vitest';
import { eventually, memoryLogger, withoutTreeWatches, worldName } from './helpers.js';

// engine.events() misses nothing: thousands of fast tasks, each transition once and in its
// order, on both adapters; the listing fallback; and what a connection loss leaves of it.

const N = 2000;
const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };
const quiet = memoryLogger();

/** Every 10th task fails its first attempt, every 97th fails for good. */
function plan(i: number): 'ok' | 'retry' | 'dead' {
  if (i % 97 === 0) return 'dead';
  return i % 10 === 0 ? 'retry' : 'ok';
}
const EXACT: Record<ReturnType<typeof plan>, EngineEventType[]> = {
  ok: ['queued', 'started', 'completed'],
  retry: ['queued', 'started', 'retried', 'started', 'completed'],
  dead: ['queued', 'started', 'failed'],
};

/** A stream's events by task, collected until `stop`; resolves once the stream is live. */
async function collect(engine: Engine): Promise<{
  byTask: Map<string, EngineEvent[]>;
  stop: () => Promise<void>;
}> {
  const abort = new AbortController();
  const byTask = new Map<string, EngineEvent[]>();
  let ready = false;
  let failure: unknown = null;
  const running = (async () => {
    for await (const e of engine.events({ signal: abort.signal, onReady: () => (ready = true) })) {
      const k = e.key.join('|');
      byTask.set(k, [...(byTask.get(k) ?? []), e]);
    }
  })().catch((err: unknown) => {
    failure = err;
  });
  await eventually(() => ready || failure !== null, 30_000);
  if (failure) throw failure;
  return {
    byTask,
    stop: async () => {
      abort.abort();
      await running;
      if (failure) throw failure;
    },
  };
}

/** Queues N tasks in one go and runs them with a worker until every one has ended. */
async function runAll(producer: Coordinator, workerC: Coordinator, world: string): Promise<void> {
  const engine = createEngine(producer, { world, logger: quiet });
  const names = Array.from({ length: N }, (_, i) => `t${i}`);
  await engine.queueMany(
    names.map((name, i) => ({
      name,
      type: 'fast',
      maxAttempts: plan(i) === 'dead' ? 1 : 2,
      backoff: { baseMs: 0, maxMs: 0 },
    })),
  );
  const worker = runWorker(
    workerC,
    {
      fast: (t) => {
        const p = plan(Number(t.name.slice(1)));
        if (p === 'dead' || (p === 'retry' && t.attempt === 1)) throw new Error(`${t.name} broke`);
        return t.attempt;
      },
    },
    { world, concurrency: 16, logger: quiet, ...fast },
  );
  const dead = names.filter((_, i) => plan(i) === 'dead').length;
  try {
    await eventually(async () => {
      const c = await engine.counts();
      return c.completed === N - dead && c.failed === dead;
    }, 240_000);
  } finally {
    await worker.stop();
  }
}

/** The states a sequence of events leads a task through must follow from one another. */
const NEXT: Record<string, readonly EngineEventType[]> = {
  none: ['queued'],
  pending: ['started', 'cancelled', 'queued'],
  working: ['completed', 'retried', 'failed', 'cancelled'],
  completed: ['removed', 'queued'],
  failed: ['retried', 'queued', 'cancelled'],
};
const STATE_AFTER: Record<string, string> = {
  queued: 'pending',
  started: 'working',
  completed: 'completed',
  retried: 'pending',
  failed: 'failed',
  cancelled: 'none',
  removed: 'none',
};
function assertValidPath(name: string, types: EngineEventType[]): void {
  let state = 'none';
  for (const t of types) {
    expect(NEXT[state], `${name}: ${types.join(' ')}`).toContain(t);
    state = STATE_AFTER[t]!;
  }
}

describeOnBackends('engine: every transition of every task, once and in order', (backend) => {
  it(`${N} fast tasks, some retried, some dead: each task's exact history`, {
    timeout: 300_000,
  }, async () => {
    const world = worldName('ev');
    const producer = await backend().connect();
    const engine = createEngine(producer, { world, buckets: 8, logger: quiet });
    await engine.init();
    const stream = await collect(createEngine(await backend().connect(), { world, logger: quiet }));
    await runAll(producer, await backend().connect(), world);
    await eventually(() => {
      let ended = 0;
      for (const events of stream.byTask.values()) {
        const last = events[events.length - 1]!.type;
        if (last === 'completed' || last === 'failed') ended++;
      }
      return ended === N;
    }, 60_000);
    await stream.stop();
    expect(stream.byTask.size).toBe(N);
    for (let i = 0; i < N; i++) {
      const events = stream.byTask.get(`t${i}`) ?? [];
      expect(
        events.map((e) => e.type),
        `t${i}`,
      ).toEqual(EXACT[plan(i)]);
      // A failure's event says why, as recorded.
      for (const e of events.filter((x) => x.type === 'failed' || x.type === 'retried'))
        expect(e.error, `t${i}`).toEqual(
          expect.objectContaining({ code: 'HANDLER_ERROR', message: `t${i} broke` }),
        );
    }
  });

  it('without tree watches: every task still queued, started and ended once, in order', {
    timeout: 300_000,
  }, async () => {
    const world = worldName('evl');
    const producer = await backend().connect();
    const engine = createEngine(producer, { world, buckets: 8, logger: quiet });
    await engine.init();
    const listed = createEngine(withoutTreeWatches(await backend().connect()), {
      world,
      logger: quiet,
    });
    const stream = await collect(listed);
    await runAll(producer, await backend().connect(), world);
    await eventually(() => {
      let ended = 0;
      for (const events of stream.byTask.values()) {
        const last = events[events.length - 1]!.type;
        if (last === 'completed' || last === 'failed') ended++;
      }
      return ended === N;
    }, 60_000);
    await stream.stop();
    for (let i = 0; i < N; i++) {
      const types = (stream.byTask.get(`t${i}`) ?? []).map((e) => e.type);
      assertValidPath(`t${i}`, types);
      // Listings between the changes: a retry may not be seen, the rest is.
      if (plan(i) === 'ok') expect(types, `t${i}`).toEqual(EXACT.ok);
      else expect(types[types.length - 1]).toBe(plan(i) === 'dead' ? 'failed' : 'completed');
    }
  });

  it('a session lost midway and renewed: every history still exact, nothing twice', {
    timeout: 300_000,
  }, async () => {
    const world = worldName('evs');
    const producer = await backend().connect();
    const engine = createEngine(producer, { world, buckets: 8, logger: quiet });
    await engine.init();
    const watcherC = await backend().connect();
    const stream = await collect(createEngine(watcherC, { world, logger: quiet }));
    const worker = runWorker(
      await backend().connect(),
      { fast: (t) => t.name },
      {
        world,
        concurrency: 8,
        logger: quiet,
        ...fast,
      },
    );
    const total = 400;
    const batch = (from: number, to: number) =>
      engine.queueMany(
        Array.from({ length: to - from }, (_, i) => ({ name: `t${from + i}`, type: 'fast' })),
      );
    const completed = (n: number) =>
      eventually(async () => (await engine.counts()).completed >= n, 120_000);
    try {
      await batch(0, 200);
      await completed(100);
      await backend().expireSession(watcherC);
      // Queued and run while the stream has no session: it learns of them after the renewal.
      await batch(200, total);
      await completed(300);
      await watcherC.renewSession();
      await completed(total);
    } finally {
      await worker.stop();
    }
    await eventually(
      () =>
        [...stream.byTask.values()].filter((e) => e[e.length - 1]!.type === 'completed').length ===
        total,
      60_000,
    );
    await stream.stop();
    for (let i = 0; i < total; i++)
      expect(
        (stream.byTask.get(`t${i}`) ?? []).map((e) => e.type),
        `t${i}`,
      ).toEqual(['queued', 'started', 'completed']);
  });

  it("'drained' fires on an empty world too", async () => {
    const c = await backend().connect();
    const world = worldName('empty');
    await createEngine(c, { world, buckets: 2, logger: quiet }).init();
    const worker = runWorker(c, { t: () => 1 }, { world, logger: quiet, ...fast });
    let drained = 0;
    worker.on('drained', (e) => {
      drained++;
      expect(e.stats.claimed).toBe(0);
    });
    try {
      await eventually(() => drained === 1);
    } finally {
      await worker.stop();
    }
  });
});

describe('engine: events across a connection loss [zookeeper]', () => {
  it('a partition and a session expiry: nothing twice, every step of the gap in order', {
    timeout: 300_000,
  }, async () => {
    const server = inject('zkConnect');
    const { chroot } = await freshChroot(server, 'evloss');
    const world = 'loss';
    const producer = await connectZk(`${server}${chroot}`);
    const workerC = await connectZk(`${server}${chroot}`);
    // The stream's own connection goes through a proxy the test cuts.
    const proxy = await startProxy(server);
    // The partition must end before the session does: a whole timeout without a connection
    // is a lost session, and the partition half of the test would become a second expiry.
    const watcher = (await connectZk(`${proxy.hostPort}${chroot}`, {
      sessionTimeoutMs: 30_000,
    })) as ZkCoordinator;
    try {
      const engine = createEngine(producer, { world, buckets: 8, logger: quiet });
      await engine.init();
      const stream = await collect(createEngine(watcher, { world, logger: quiet }));
      const total = 600;
      const worker = runWorker(
        workerC,
        { fast: (t) => t.name },
        { world, concurrency: 8, logger: quiet, ...fast },
      );
      const queueBatch = (from: number, to: number) =>
        engine.queueMany(
          Array.from({ length: to - from }, (_, i) => ({ name: `t${from + i}`, type: 'fast' })),
        );
      const completed = async (n: number) =>
        eventually(async () => (await engine.counts()).completed >= n, 120_000);
      await queueBatch(0, 200);
      await completed(100);
      // A partition: the stream's connection hears nothing while tasks are queued and run.
      proxy.setPartitioned(true);
      await eventually(() => watcher.state === 'suspended', 30_000);
      await queueBatch(200, 400);
      // Some of the tasks queued while the stream is away are also claimed and completed then.
      await completed(300);
      proxy.setPartitioned(false);
      await eventually(() => watcher.state === 'connected', 30_000);
      // A session expiry: the stream's watches are gone with it until the session is renewed.
      await killSession(watcher, { via: server, silence: (on) => proxy.setPartitioned(on) });
      await queueBatch(400, total);
      await completed(500);
      await watcher.renewSession();
      await completed(total);
      await worker.stop();
      await eventually(
        () =>
          [...stream.byTask.values()].filter((e) => e[e.length - 1]!.type === 'completed')
            .length === total,
        60_000,
      );
      await stream.stop();
      // Across both gaps each task's history is complete and nothing is told twice: the
      // steps a task took while the stream was away come out after it is back, in order.
      for (let i = 0; i < total; i++)
        expect(
          (stream.byTask.get(`t${i}`) ?? []).map((e) => e.type),
          `t${i}`,
        ).toEqual(['queued', 'started', 'completed']);
    } finally {
      await Promise.allSettled([producer.close(), workerC.close(), watcher.close()]);
      await proxy.close();
    }
  });
});
