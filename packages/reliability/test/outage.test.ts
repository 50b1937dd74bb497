/**
 * A ZooKeeper outage longer than the worker's session, on a server of the test's own: stopped
 * and started again, or cut off the network (its network namespace's link down) and joined
 * again. The work that was running and the work that was waiting both resume as soon as the
 * server takes sessions again, bounded by nothing but the worker's own round trips.
 */
import { createEngine, runWorker } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import { createNetwork, startZooKeeper, type ZooKeeperServer } from '@zoott/zk-testkit';
import { describe, expect, it } from 'vitest';
import { until } from './support/zk.js';

const quiet = { warn: () => {} };
/** Every request deadline of the worker: a call left to it would stall the test for minutes. */
const FAR = 600_000;
/**
 * The worker's session. A restarted server restores it from its log with this timeout, so
 * the claims of the lost session would hold their tasks for this long after the restart.
 */
const SESSION_MS = 8000;
/** How long each renewal try may take to connect: the outage outlasts two of them. */
const CONNECT_MS = 2000;

/** How the outage begins and ends. */
interface Outage {
  down(): Promise<void>;
  up(): Promise<void>;
}

/**
 * A worker on `server` (a task running, one waiting behind it) through `outage`, held until
 * the worker has called its session lost and failed to renew it twice (what other parts of
 * the worker ask meanwhile goes out in those tries). Returns the task starts after the
 * outage's end began, in ms from then.
 */
async function throughOutage(server: ZooKeeperServer, outage: Outage) {
  // Outlives the outage: the producer keeps its session and reads the records after.
  const producer = await connectZk(server.connectString, { sessionTimeoutMs: 40_000 });
  const engine = createEngine(producer, { world: 'outage', buckets: 2, logger: quiet });
  await engine.init();
  const starts: Array<{ name: string; at: number }> = [];
  let firstRun = true;
  const worker = await connectZk(server.connectString, {
    sessionTimeoutMs: SESSION_MS,
    connectTimeoutMs: CONNECT_MS,
    requestTimeoutMs: FAR,
    retry: { deadlineMs: FAR },
  });
  let failedRenewals = 0;
  const logger = {
    warn: (_fields: object, msg: string) => {
      if (msg === 'renewSession failed') failedRenewals++;
    },
  };
  const handle = runWorker(
    worker,
    {
      // The first run of `running` lasts until the session is lost; its re-run is quick.
      slow: (task) => {
        starts.push({ name: task.name, at: Date.now() });
        if (!firstRun) return 'ok';
        firstRun = false;
        return new Promise((_, reject) =>
          task.signal.addEventListener('abort', () => reject(task.signal.reason)),
        );
      },
      quick: (task) => {
        starts.push({ name: task.name, at: Date.now() });
        return 'ok';
      },
    },
    { world: 'outage', concurrency: 1, logger, pollMs: 200 },
  );
  try {
    await engine.queue({ name: 'running', type: 'slow' });
    await until('running started', () => starts.length === 1);
    await engine.queue({ name: 'waiting', type: 'quick' });
    const lost = new Promise<void>((resolve) => {
      const off = worker.onSession((e) => {
        if (e.type === 'lost') {
          off();
          resolve();
        }
      });
    });
    await outage.down();
    // From the end of the outage on: the worker may be back before up() has returned.
    let upAt = Number.POSITIVE_INFINITY;
    try {
      await lost;
      await until('two renewals failed', () => failedRenewals >= 2, 60_000);
    } finally {
      upAt = Date.now();
      await outage.up();
    }
    await until(
      'both completed',
      async () =>
        (await engine.task(['running']))?.state === 'completed' &&
        (await engine.task(['waiting']))?.state === 'completed',
      60_000,
    );
    expect(worker.state).toBe('connected');
    return starts.filter((s) => s.at >= upAt).map((s) => ({ name: s.name, ms: s.at - upAt }));
  } finally {
    await handle.stop();
    await worker.close();
    engine.close();
    await producer.close();
  }
}

describe('recovery after a ZooKeeper outage [zookeeper]', () => {
  it('server stopped and started: the task that was running and the one waiting both run again at once', async () => {
    const server = await startZooKeeper({ own: true });
    try {
      const after = await throughOutage(server, {
        down: () => server.stop(),
        up: () => server.start(),
      });
      expect(after.map((s) => s.name).sort()).toEqual(['running', 'waiting']);
      // Before the restored session would have expired on its own: its claim on `running`
      // and its registration went with the renewal, not a session timeout later.
      expect(after.find((s) => s.name === 'running')!.ms).toBeLessThan(SESSION_MS);
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('server cut off the network (a namespace partition) and joined again: the same', async () => {
    const net = await createNetwork();
    try {
      const host = await net.addHost('zk');
      const server = await startZooKeeper({ host });
      try {
        // The link down: nothing passes either way, the worker's connection goes silent and
        // the server expires its session; the server itself runs on.
        const after = await throughOutage(server, {
          down: () => host.setCut(true),
          up: () => host.setCut(false),
        });
        expect(after.map((s) => s.name).sort()).toEqual(['running', 'waiting']);
        expect(after.find((s) => s.name === 'running')!.ms).toBeLessThan(SESSION_MS);
      } finally {
        await server.stop();
      }
    } finally {
      await net.destroy();
    }
  }, 180_000);
});
