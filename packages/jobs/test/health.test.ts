import { createEngine } from '@zoott/core';
import { until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { startZooKeeper, type ZooKeeperServer } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerDaemon, type WorkerDaemon } from '../src/internal.js';

interface HealthBody {
  healthy: boolean;
  state: string;
  session: string;
  lastReplyAgeMs: number | null;
}

/** One look at both endpoints: what /healthz said, and how long /metrics took to answer. */
interface Probe {
  at: number;
  status: number;
  body: HealthBody;
  metricsMs: number;
  metrics: string;
}

/** A gauge's value in Prometheus text (`name{labels} value`), or null. */
function gauge(text: string, series: string): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return null;
}

// /healthz and /metrics through an outage longer than the session: a server of its own,
// stopped, then started again. The session is long (6 s), so a scrape that waited on
// ZooKeeper would show: it would take seconds, not milliseconds.
describe('/healthz and /metrics while ZooKeeper goes away', { timeout: 180_000 }, () => {
  let server: ZooKeeperServer;
  let daemon: WorkerDaemon;

  beforeAll(async () => {
    server = await startZooKeeper({ own: true });
    const admin = await connectZk(server.connectString);
    await createEngine(admin, { world: 'health' }).init();
    await admin.close();
    daemon = await startWorkerDaemon({
      connect: server.connectString,
      world: 'health',
      nodeId: 'health-1',
      handlers: { noop: async () => null },
      sessionTimeoutMs: 6000,
      metricsPort: 0,
      logLevel: 'silent',
    });
  });

  afterAll(async () => {
    await daemon?.kill();
    await server?.stop({ signal: 'SIGKILL' });
  });

  async function probe(): Promise<Probe> {
    const metricsUrl = daemon.metricsServer!.url;
    const t0 = Date.now();
    const [health, metrics] = await Promise.all([
      fetch(metricsUrl.replace(/\/metrics$/, '/healthz')),
      fetch(metricsUrl).then(async (r) => ({ text: await r.text(), ms: Date.now() - t0 })),
    ]);
    return {
      at: t0,
      status: health.status,
      body: (await health.json()) as HealthBody,
      metricsMs: metrics.ms,
      metrics: metrics.text,
    };
  }

  it('is 200 only while connected and serving, 503 naming the state otherwise; /metrics answers at once throughout', async () => {
    const first = await until('the worker serving', async () => {
      const p = await probe();
      return p.status === 200 ? p : undefined;
    });
    expect(first.body).toMatchObject({ healthy: true, state: 'serving', session: 'connected' });
    expect(gauge(first.metrics, 'zoott_worker_serving')).toBe(1);

    const probes: Probe[] = [];
    let probing = true;
    // A sampler, not a wait: one look at both endpoints every 100 ms for the whole outage.
    const sampler = (async () => {
      while (probing) {
        probes.push(await probe());
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const seen = (state: string) => probes.some((p) => p.body.state === state);
    try {
      await server.stop();
      await until(
        'the session seen lost',
        () => seen('lost') || seen('renewing') || undefined,
        60_000,
      );
      await server.start();
      await until(
        'the worker serving again',
        () => (probes.at(-1)?.status === 200 && seen('renewing')) || undefined,
        60_000,
      );
    } finally {
      probing = false;
      await sampler;
    }

    for (const p of probes) {
      // 200 exactly when connected and serving; otherwise 503 with the state in the body.
      if (p.status === 200) expect(p.body).toMatchObject({ healthy: true, state: 'serving' });
      else {
        expect(p.status).toBe(503);
        expect(p.body.healthy).toBe(false);
        expect(['suspended', 'lost', 'renewing', 'registering']).toContain(p.body.state);
      }
      if (p.body.state === 'serving') expect(p.body.session).toBe('connected');
      // What the process knows, at once (a read of the counts gets 0.5 s): never the session
      // in the way, which a scrape waiting on ZooKeeper would wait for (6 s).
      expect(p.metricsMs, `a scrape at ${p.at}`).toBeLessThan(3000);
    }
    expect(seen('suspended')).toBe(true);
    expect(probes.some((p) => p.body.state === 'suspended' && p.status === 503)).toBe(true);
    // During the outage the metrics say so: not serving, and ZooKeeper silent for seconds.
    const during = probes.filter((p) => p.body.state === 'renewing');
    expect(during.length).toBeGreaterThan(0);
    for (const p of during) {
      expect(gauge(p.metrics, 'zoott_worker_serving')).toBe(0);
      expect(gauge(p.metrics, 'zoott_worker_session_state{state="connected"}')).toBe(0);
    }
    // Silent for more than the session timeout (6 s) before the server came back.
    const ages = during.map((p) =>
      gauge(p.metrics, 'zoott_worker_zookeeper_last_reply_age_seconds'),
    );
    expect(Math.max(...ages.map((a) => a ?? 0))).toBeGreaterThan(6);
    expect(Math.max(...during.map((p) => p.body.lastReplyAgeMs ?? 0))).toBeGreaterThan(6000);
    // Back: heard from just now.
    const back = probes.at(-1)!;
    expect(back.body).toMatchObject({ healthy: true, state: 'serving', session: 'connected' });
    expect(gauge(back.metrics, 'zoott_worker_zookeeper_last_reply_age_seconds')).toBeLessThan(5);
  });
});
