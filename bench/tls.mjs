// Bench phase: what TLS costs. One ZooKeeper with both a plain clientPort and a TLS
// secureClientPort (Netty connection factory, as every secured server runs): raw creates of
// one pipelined client, and the drain of no-op tasks by the worker fleet, each over TLS and in
// plain text, in this run, on this server; the keys are the TLS figures as ratios to the plain
// ones. Imported by bench/run.mjs; uses the built packages only.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connectZk } from '../packages/zk-adapter/dist/index.js';
import {
  makeZkTestCertificates,
  serverTls,
  startZooKeeper,
} from '../packages/zk-testkit/dist/index.js';
import { pipelined } from './tools.mjs';

/** The variable bench/worker.mjs reads to connect over TLS (the CA to check the server with). */
export const WORKER_TLS_CA_ENV = 'BENCH_ZK_TLS_CA';

/** Raw pipelined creates per second of client `c` under `parent` (one warm-up round first). */
async function rawCreates(c, parent, n, width) {
  await c.create(parent);
  const once = async (count) => {
    const t0 = performance.now();
    await pipelined(count, width, () => c.create(`${parent}/n-`, undefined, { sequential: true }));
    return count / ((performance.now() - t0) / 1000);
  };
  await once(Math.min(5_000, n));
  return once(n);
}

/**
 * The TLS phase on a server of its own. `Fleet` and `drainTasks` are bench/run.mjs's (a fleet
 * of worker processes; a queue-then-drain of no-op tasks with its CPU per task). The two
 * transports take turns, plain first then TLS, then TLS first then plain, and each figure is
 * the mean of its two turns, so a drift of the machine's load over the phase falls on both.
 */
export async function tlsCost({ Fleet, drainTasks, workers, rawCount, drainCount, width, log }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zoott-bench-tls-'));
  const certs = makeZkTestCertificates(dir);
  const server = await startZooKeeper({ security: { tls: serverTls(certs) } });
  const tls = { ca: readFileSync(certs.ca) };
  const plain = await connectZk(server.connectString, { sessionTimeoutMs: 30_000 });
  const secure = await connectZk(server.secureConnectString, { sessionTimeoutMs: 30_000, tls });
  const fleets = {
    plain: new Fleet(server.connectString),
    tls: new Fleet(server.secureConnectString),
  };
  try {
    await fleets.plain.start(workers);
    // The TLS fleet's processes read the CA from their environment, inherited at fork.
    process.env[WORKER_TLS_CA_ENV] = certs.ca;
    try {
      await fleets.tls.start(workers);
    } finally {
      delete process.env[WORKER_TLS_CA_ENV];
    }
    const client = { plain, tls: secure };
    // The server's first work (its JIT, the first snapshots of a new data folder) on neither
    // transport's account.
    for (const t of ['plain', 'tls']) await rawCreates(client[t], `/warm-${t}`, rawCount, width);
    const raw = { plain: [], tls: [] };
    const drain = { plain: [], tls: [] };
    for (const [round, order] of [
      ['1', ['plain', 'tls']],
      ['2', ['tls', 'plain']],
    ]) {
      for (const t of order) {
        raw[t].push(await rawCreates(client[t], `/raw-${t}-${round}`, rawCount, width));
        log(`tls: raw creates ${t}, round ${round}: ${raw[t].at(-1).toFixed(0)}/s`);
      }
    }
    for (const t of ['plain', 'tls'])
      await drainTasks(client[t], fleets[t], `tls-warmup-${t}`, Math.ceil(drainCount / 4));
    for (const [round, order] of [
      ['1', ['plain', 'tls']],
      ['2', ['tls', 'plain']],
    ]) {
      for (const t of order) {
        drain[t].push(
          await drainTasks(client[t], fleets[t], `tls-drain-${t}-${round}`, drainCount),
        );
        log(`tls: drain ${t}, round ${round}: ${drain[t].at(-1).perSecond.toFixed(0)} tasks/s`);
      }
    }
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const rawPer = { plain: mean(raw.plain), tls: mean(raw.tls) };
    const drainPer = {
      plain: mean(drain.plain.map((d) => d.perSecond)),
      tls: mean(drain.tls.map((d) => d.perSecond)),
    };
    const cpu = (t, key) => Math.round(mean(drain[t].map((d) => d[key] ?? Number.NaN)));
    return {
      results: {
        tls_raw_creates_per_s: Math.round(rawPer.tls),
        tls_drain_tasks_per_s: Math.round(drainPer.tls),
      },
      ratios: {
        tls_raw_vs_plain: Number((rawPer.tls / rawPer.plain).toFixed(3)),
        tls_drain_vs_plain: Number((drainPer.tls / drainPer.plain).toFixed(3)),
      },
      details: {
        tls_plain_raw_creates_per_s: Math.round(rawPer.plain),
        tls_plain_drain_tasks_per_s: Math.round(drainPer.plain),
        tls_raw_rounds_per_s: { plain: raw.plain.map(Math.round), tls: raw.tls.map(Math.round) },
        tls_drain_rounds_per_s: {
          plain: drain.plain.map((d) => Math.round(d.perSecond)),
          tls: drain.tls.map((d) => Math.round(d.perSecond)),
        },
        tls_drain_worker_cpu_us_per_task: {
          plain: cpu('plain', 'workerCpuUsPerTask'),
          tls: cpu('tls', 'workerCpuUsPerTask'),
        },
        tls_drain_zk_cpu_us_per_task: {
          plain: cpu('plain', 'zkCpuUsPerTask'),
          tls: cpu('tls', 'zkCpuUsPerTask'),
        },
        tls_raw_creates: rawCount,
        tls_drain_tasks: drainCount,
      },
    };
  } finally {
    await Promise.all(Object.values(fleets).map((f) => f.exit().catch(() => undefined)));
    await Promise.all([plain, secure].map((c) => c.close().catch(() => undefined)));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rows of the human table. */
export function tlsRows(tls) {
  return [
    ['raw creates/s over TLS', tls.results.tls_raw_creates_per_s],
    ['  TLS / plain raw creates (same run)', tls.ratios.tls_raw_vs_plain],
    ['drain tasks/s over TLS', tls.results.tls_drain_tasks_per_s],
    ['  TLS / plain drain (same run)', tls.ratios.tls_drain_vs_plain],
  ];
}
