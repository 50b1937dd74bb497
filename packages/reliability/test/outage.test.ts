/**
 * A ZooKeeper outage longer than the worker's session, on a server of the test's own that it
 * stops and starts: the work that was running and the work that was waiting both resume as
 * soon as the server takes sessions again, bounded by nothing but the worker's own round trips.
 */
import { createEngine, runWorker } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import { startZooKeeper } from '@zoott/zk-testkit';
import { describe, expect, it } from 'vitest';
import { until } from './support/zk.js';

const quiet = { warn: () => {} };
/** Every request deadline of the worker: a call left to it would stall the test for minutes. */
const FAR = 600_000;
/**
 * The worker's session. The restarted server restores it from its log with this timeout, so
 * the claims of the lost session would hold their tasks for this long after the restart.
 */
const SESSION_MS = 8000;

describe('recovery after a server outage [zookeeper]', () => {
  it('the task that was running and the one that was waiting both run again as soon as the server is back', async () => {
    const server = await startZooKeeper({ own: true });
    const producer = await connectZk(server.connectString, { sessionTimeoutMs: 40_000 });
    const engine = createEngine(producer, { world: 'outage', buckets: 2, logger: quiet });
    await engine.init();
    const starts: Array<{ name: string; at: number }> = [];
    let firstRun = true;
    const worker = await connectZk(server.connectString, {
      sessionTimeoutMs: SESSION_MS,
      requestTimeoutMs: FAR,
      retry: { deadlineMs: FAR },
    });
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
      { world: 'outage', concurrency: 1, logger: quiet, pollMs: 200 },
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
      await server.stop();
      // From the restart on: the worker may be back before start() has seen the server ready.
      let restartedAt = Number.POSITIVE_INFINITY;
      try {
        await lost;
      } finally {
        restartedAt = Date.now();
        await server.start();
      }
      await until(
        'both completed',
        async () =>
          (await engine.task(['running']))?.state === 'completed' &&
          (await engine.task(['waiting']))?.state === 'completed',
        60_000,
      );
      const after = starts.filter((s) => s.at >= restartedAt).map((s) => s.name);
      expect(after.sort()).toEqual(['running', 'waiting']);
      // Before the restored session would have expired on its own: its claim on `running`
      // and its registration went with the renewal, not a session timeout later.
      const rerun = starts.find((s) => s.name === 'running' && s.at >= restartedAt)!;
      expect(rerun.at - restartedAt).toBeLessThan(SESSION_MS);
      expect(worker.state).toBe('connected');
    } finally {
      await handle.stop();
      await worker.close();
      engine.close();
      await producer.close();
      await server.stop();
    }
  }, 180_000);
});
