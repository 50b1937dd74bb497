// `pnpm bench --scale`: a million tasks through one world with retention on. Queued through
// `queueMany` in chunks (one pipelined `queue` per task where the engine has no queueMany)
// while 4 workers drain, with the pending backlog held near BACKLOG so the server's node
// count measures what retention keeps, not a million pending entries. Reports throughput,
// the server's node count and approximate data size (during the run and at the end, against
// 2x the retention limits), the largest worker RSS and the server's heap.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine, updateRetention } from '../packages/core/dist/index.js';
import { connectZk } from '../packages/zk-adapter/dist/index.js';
import { startZooKeeper } from '../packages/zk-testkit/dist/index.js';
import { writeResults } from './tools.mjs';
import { mntr, serverMemory } from './zk-stats.mjs';

const CHUNK = 1_000;
/** Nodes one retained task holds: its tree node and its completed record. */
const NODES_PER_TASK = 2;

/**
 * Runs the scale mode. `Fleet` and the options come from bench/run.mjs; `total` tasks
 * (default 1,000,000; `--quick` 20,000; BENCH_SCALE_TASKS overrides).
 */
export async function runScale({ Fleet, log, quick, asJson, workers, concurrency }) {
  const total = Number(process.env.BENCH_SCALE_TASKS ?? (quick ? 20_000 : 1_000_000));
  // The default count limit (100,000 completed records), or a tenth of a reduced run so
  // the limit is actually reached.
  const keep = Math.min(100_000, Math.max(1_000, Math.floor(total / 10)));
  const backlog = Math.min(50_000, Math.max(2_000, Math.floor(total / 20)));
  const started = Date.now();
  log(`scale: ${total} tasks, keep ${keep} completed, backlog ${backlog}`);
  const server = await startZooKeeper({ own: true });
  const c = await connectZk(server.connectString, { sessionTimeoutMs: 30_000 });
  const fleet = new Fleet(server.connectString);
  try {
    const world = 'scale';
    const engine = createEngine(c, { world, logger: { warn: () => {}, info: () => {} } });
    await engine.init();
    await updateRetention(c, world, { completed: { maxAgeMs: 24 * 3_600_000, maxCount: keep } });
    const base = await mntr(server.connectString);
    await fleet.start(workers);
    await fleet.run(world);
    const many = typeof engine.queueMany === 'function';
    let queued = 0;
    const peak = { nodes: 0, bytes: 0 };
    const sample = async () => {
      const m = await mntr(server.connectString);
      peak.nodes = Math.max(peak.nodes, m.zk_znode_count);
      peak.bytes = Math.max(peak.bytes, m.zk_approximate_data_size);
      return m;
    };
    const t0 = performance.now();
    let shown = Date.now();
    // BENCH_HEAP_SNAPSHOTS=<dir>: a heap snapshot of every worker at these fractions of the run.
    const snapDir = process.env.BENCH_HEAP_SNAPSHOTS;
    const snapAt = snapDir ? [0.1, 0.5, 0.9] : [];
    // Snapshots still due when the run ends (the last ones can be overtaken while earlier
    // ones are written) are taken then.
    while (fleet.completed() < total || snapAt.length > 0) {
      if (fleet.errors.length > 0) throw new Error(`worker failed: ${fleet.errors[0]}`);
      if (queued < total && queued - fleet.completed() < backlog) {
        const n = Math.min(CHUNK, total - queued);
        const first = queued;
        queued += n;
        const requests = Array.from({ length: n }, (_, i) => ({
          name: `s${first + i}`,
          type: 'noop',
        }));
        if (many) await engine.queueMany(requests);
        else await Promise.all(requests.map((r) => engine.queue(r)));
      } else await sleep(20);
      if (snapAt.length > 0 && fleet.completed() >= snapAt[0] * total) {
        const label = `at${Math.round(snapAt.shift() * 100)}`;
        const got = await fleet.heap(snapDir, label);
        const used = got.map((h) => (h.stats.used_heap_size / 2 ** 20).toFixed(1)).join(' ');
        const rss = got.map((h) => (h.rss / 2 ** 20).toFixed(0)).join(' ');
        log(`scale: heap snapshots ${label}: live heap MB ${used}; RSS MB ${rss}`);
      }
      if (Date.now() - shown >= 5_000) {
        shown = Date.now();
        const m = await sample();
        log(
          `scale: ${fleet.completed()}/${total} done, ${m.zk_znode_count} nodes, ${(m.zk_approximate_data_size / 2 ** 20).toFixed(1)} MB, worker RSS ${fleet.maxRssMb().toFixed(0)} MB (now ${fleet.largestNow()})`,
        );
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    const rssMb = fleet.maxRssMb();
    // The reaper's last passes: wait (bounded) until the completed records are within the limit.
    const settleEnd = Date.now() + 120_000;
    while ((await engine.counts()).completed > keep && Date.now() < settleEnd) await sleep(500);
    await fleet.stop();
    const end = await sample();
    const counts = await engine.counts();
    const heap = await serverMemory(server.connectString);
    // 2x the limits: twice the nodes (and bytes) the retained tasks may hold, over what the
    // empty world held.
    const bytesPerTask =
      counts.completed > 0
        ? (end.zk_approximate_data_size - base.zk_approximate_data_size) / counts.completed
        : null;
    const nodeBound = base.zk_znode_count + 2 * NODES_PER_TASK * keep;
    // While running, the pending backlog (tree node + entry per task) comes on top.
    const runningBound = nodeBound + NODES_PER_TASK * backlog;
    const byteBound =
      bytesPerTask === null ? null : base.zk_approximate_data_size + 2 * bytesPerTask * keep;
    const doc = {
      scale_tasks: total,
      scale_tasks_per_s: Math.round(total / seconds),
      scale_seconds: Number(seconds.toFixed(1)),
      scale_retention_max_completed: keep,
      scale_completed_kept: counts.completed,
      scale_server_nodes_end: end.zk_znode_count,
      scale_server_nodes_peak: peak.nodes,
      scale_server_node_bound: nodeBound,
      scale_server_node_bound_running: runningBound,
      scale_server_data_bytes_end: end.zk_approximate_data_size,
      scale_server_data_bytes_peak: peak.bytes,
      scale_server_data_byte_bound: byteBound === null ? null : Math.round(byteBound),
      zk_bytes_per_retained_task: bytesPerTask === null ? null : Math.round(bytesPerTask),
      scale_worker_rss_mb: Number(rssMb.toFixed(1)),
      scale_server_heap_used_mb: heap.heap_used_mb,
      scale_server_rss_mb: heap.rss_mb,
      pass: {
        'nodes within 2x the retention limits (end)': end.zk_znode_count <= nodeBound,
        'nodes within 2x the limits + the backlog (peak)': peak.nodes <= runningBound,
        'worker RSS <= 150 MB': rssMb <= 150,
      },
      setup: {
        workers,
        concurrency,
        ...fleet.setup(),
        backlog,
        queue_many: many,
        quick,
        seconds: Math.round((Date.now() - started) / 1000),
        at: new Date().toISOString(),
      },
    };
    writeResults('scale.json', doc);
    if (asJson) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    else {
      const rows = Object.entries(doc).filter(([, v]) => typeof v !== 'object' || v === null);
      const out = ['', 'scale measure                          value', '-'.repeat(50)];
      for (const [k, v] of rows) out.push(`${k.padEnd(34)} ${String(v).padStart(14)}`);
      out.push('');
      for (const [k, ok] of Object.entries(doc.pass))
        out.push(`${k.padEnd(46)} ${ok ? 'PASS' : 'FAIL'}`);
      process.stdout.write(`${out.join('\n')}\n`);
    }
  } finally {
    await fleet.exit().catch(() => undefined);
    await c.close().catch(() => undefined);
    await server.stop();
  }
}
