import { createEngine } from '@zoott/core';
import { until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { startZooKeeper, type ZooKeeperServer } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerDaemon, type WorkerDaemon } from '../src/internal.js';

// /healthz follows the session: a server of its own, stopped for longer than the session
// timeout, then started again.
describe('/healthz while ZooKeeper goes away', { timeout: 180_000 }, () => {
  let server: ZooKeeperServer;
  let daemon: WorkerDaemon;

  beforeAll(async () => {
    server = await startZooKeeper({ own: true, tickTimeMs: 200 });
    const admin = await connectZk(server.connectString);
    await createEngine(admin, { world: 'health' }).init();
    await admin.close();
    daemon = await startWorkerDaemon({
      connect: server.connectString,
      world: 'health',
      nodeId: 'health-1',
      handlers: { noop: async () => null },
      sessionTimeoutMs: 2000,
      metricsPort: 0,
      logLevel: 'silent',
    });
  });

  afterAll(async () => {
    await daemon?.kill();
    await server?.stop({ signal: 'SIGKILL' });
  });

  async function health(): Promise<{
    status: number;
    body: { healthy: boolean; session: string };
  }> {
    const url = daemon.metricsServer!.url.replace(/\/metrics$/, '/healthz');
    const res = await fetch(url);
    return {
      status: res.status,
      body: (await res.json()) as { healthy: boolean; session: string },
    };
  }

  it('is 200 while connected, 503 while the session is lost, 200 again once renewed', async () => {
    expect(await health()).toEqual({ status: 200, body: { healthy: true, session: 'connected' } });
    await server.stop();
    const lost = await until('the session to be lost', async () => {
      const h = await health();
      return h.body.session === 'lost' ? h : undefined;
    });
    expect(lost).toEqual({ status: 503, body: { healthy: false, session: 'lost' } });
    await server.start();
    const back = await until('the session to be renewed', async () => {
      const h = await health();
      return h.body.session === 'connected' ? h : undefined;
    });
    expect(back.status).toBe(200);
  });
});
