import { createServer, type Server } from 'node:http';
import type { AreaCounts, SessionState } from '@zoott/core';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Health } from './health.js';

/**
 * The longest a scrape waits for its refresh (the world's counts, read from ZooKeeper) before
 * it answers with what the process knows: during an outage a read would wait for the session,
 * seconds past a scraper's timeout, just when the metrics matter most.
 */
export const SCRAPE_WAIT_MS = 500;

const SESSION_STATES: readonly SessionState[] = [
  'connecting',
  'connected',
  'suspended',
  'lost',
  'closed',
];

/**
 * The worker's Prometheus metrics, in a registry of its own (so several workers in one
 * process do not collide). Names are prefixed `zoott_worker_`.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly started = new Counter({
    name: 'zoott_worker_tasks_started_total',
    help: 'Tasks this worker started, by type',
    labelNames: ['type'],
    registers: [this.registry],
  });
  readonly completed = new Counter({
    name: 'zoott_worker_tasks_completed_total',
    help: 'Tasks this worker completed, by type',
    labelNames: ['type'],
    registers: [this.registry],
  });
  readonly failed = new Counter({
    name: 'zoott_worker_tasks_failed_total',
    help: 'Tasks this worker dead-lettered (failed for good), by type',
    labelNames: ['type'],
    registers: [this.registry],
  });
  readonly retried = new Counter({
    name: 'zoott_worker_tasks_retried_total',
    help: 'Failed attempts that were queued for a retry, by type',
    labelNames: ['type'],
    registers: [this.registry],
  });
  readonly dropped = new Counter({
    name: 'zoott_worker_tasks_dropped_total',
    help: 'Outcomes not recorded because the claim was no longer held (session lost, cancelled)',
    labelNames: ['type'],
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'zoott_worker_task_duration_seconds',
    help: 'Run time of task handlers, by type and outcome',
    labelNames: ['type', 'outcome'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
    registers: [this.registry],
  });
  readonly worldTasks = new Gauge({
    name: 'zoott_worker_world_tasks',
    help: 'Tasks in each area of the world (pending, working, completed, failed), read from ZooKeeper at scrape time',
    labelNames: ['world', 'area'],
    registers: [this.registry],
  });
  readonly worldTasksAge = new Gauge({
    name: 'zoott_worker_world_tasks_age_seconds',
    help: 'Seconds since zoott_worker_world_tasks was last read from ZooKeeper',
    registers: [this.registry],
  });
  readonly session = new Gauge({
    name: 'zoott_worker_session_state',
    help: 'ZooKeeper session state: 1 for the current state, 0 for the others',
    labelNames: ['state'],
    registers: [this.registry],
  });
  readonly serving = new Gauge({
    name: 'zoott_worker_serving',
    help: '1 while the session is connected and the worker is registered (what /healthz answers 200 to), else 0',
    registers: [this.registry],
  });
  readonly lastReplyAge = new Gauge({
    name: 'zoott_worker_zookeeper_last_reply_age_seconds',
    help: 'Seconds since ZooKeeper was last heard from (a reply, a ping answer, a notification)',
    registers: [this.registry],
  });
  readonly processes = new Gauge({
    name: 'zoott_worker_running_processes',
    help: 'Job processes (process groups) running now',
    registers: [this.registry],
  });
  readonly processesStarted = new Counter({
    name: 'zoott_worker_processes_started_total',
    help: 'Job processes started (regular jobs and racers)',
    registers: [this.registry],
  });
  readonly running = new Gauge({
    name: 'zoott_worker_running_tasks',
    help: 'Task handlers running now',
    registers: [this.registry],
  });

  constructor() {
    // Process and Node.js metrics (CPU, memory, event loop lag, GC, handles) under their
    // usual names, so the standard dashboards work on a worker.
    collectDefaultMetrics({ register: this.registry });
  }

  setSession(state: SessionState): void {
    for (const sessionState of SESSION_STATES)
      this.session.set({ state: sessionState }, sessionState === state ? 1 : 0);
  }

  setCounts(world: string, counts: AreaCounts): void {
    for (const [area, count] of Object.entries(counts)) this.worldTasks.set({ world, area }, count);
  }

  /** The session and serving gauges, from what `/healthz` would answer now. */
  setHealth(health: Health): void {
    this.setSession(health.session);
    this.serving.set(health.healthy ? 1 : 0);
    if (health.lastReplyAgeMs !== null) this.lastReplyAge.set(health.lastReplyAgeMs / 1000);
  }
}

/** A running metrics endpoint. */
export interface MetricsServer {
  /** The bound port (useful with port 0). */
  port: number;
  url: string;
  close(): Promise<void>;
}

/** What the metrics endpoint asks of the process it serves. */
export interface ScrapeHooks {
  /** Refreshes gauges read from ZooKeeper; a scrape waits for it at most SCRAPE_WAIT_MS. */
  refresh(): Promise<void>;
  /** Sets the gauges the process knows (no I/O), just before the text is rendered. */
  collect(): void;
  /** What `/healthz` answers. */
  health(): Health;
}

/**
 * Serves `GET /metrics` (Prometheus text format) and `GET /healthz` (200 while healthy, else
 * 503; the JSON body is the {@link Health}). A scrape gives `refresh` at most
 * {@link SCRAPE_WAIT_MS}, then answers with what is known; its errors are ignored.
 */
export async function serveMetrics(
  metrics: WorkerMetrics,
  port: number,
  host: string,
  hooks: ScrapeHooks,
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      let timer: NodeJS.Timeout | undefined;
      Promise.race([
        hooks.refresh().catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, SCRAPE_WAIT_MS);
        }),
      ])
        .then(() => {
          clearTimeout(timer);
          hooks.collect();
          return metrics.registry.metrics();
        })
        .then(
          (text) => {
            res.writeHead(200, { 'content-type': metrics.registry.contentType });
            res.end(text);
          },
          (err: unknown) => {
            res.writeHead(500, { 'content-type': 'text/plain' });
            res.end(String(err));
          },
        );
      return;
    }
    if (req.method === 'GET' && path === '/healthz') {
      const health = hooks.health();
      res.writeHead(health.healthy ? 200 : 503, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(health)}\n`);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found: try /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return {
    port: bound,
    url: `http://${host}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
