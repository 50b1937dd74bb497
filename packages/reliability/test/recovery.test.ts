/**
 * Recovery on a real ZooKeeper: a worker cut off by a network partition longer than its
 * session (plus the connect timeout) loses the session, and serves again once healed.
 */
import { createEngine, runWorker } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import { startProxy } from '@zoott/zk-testkit';
import { describe, expect, it } from 'vitest';
import { until, zkNamespace } from './support/zk.js';

const quiet = { warn: () => {} };

describe('recovery after a partition [zookeeper]', () => {
  it('a worker whose session expired during a long partition renews it and serves again', async () => {
    const ns = await zkNamespace();
    const producer = await ns.connect();
    const engine = createEngine(producer, { world: 'heal', buckets: 1, logger: quiet });
    await engine.init();
    const proxy = await startProxy(ns.server);
    const sessionTimeoutMs = 2000;
    const cut = await connectZk(`${proxy.hostPort}${ns.chroot}`, { sessionTimeoutMs });
    const worker = runWorker(
      cut,
      { echo: () => 'ok' },
      { world: 'heal', logger: quiet, pollMs: 200 },
    );
    try {
      await engine.queue({ name: 'before', type: 'echo' });
      await until(
        'before completes',
        async () => (await engine.task(['before']))?.state === 'completed',
      );
      proxy.setPartitioned(true);
      // The session expires on the server; the client sees `lost`, and the worker's first
      // renewSession() calls fail, because the network is still down when they run.
      await until('the client sees lost', () => cut.state === 'lost', 20_000);
      await new Promise((r) => setTimeout(r, 3 * sessionTimeoutMs));
      proxy.setPartitioned(false);
      await engine.queue({ name: 'after', type: 'echo' });
      // The worker keeps renewing (with backoff) until the network is back, then runs `after`.
      await until(
        'after completes',
        async () => (await engine.task(['after']))?.state === 'completed',
        20_000,
      );
      expect(cut.state).toBe('connected');
    } finally {
      await worker.stop();
      await cut.close();
      await proxy.close();
      engine.close();
      await ns.cleanup();
    }
  }, 90_000);
});
