// What one drained task costs, beyond CPU time: the ZooKeeper operations it takes (counted by
// the clients that send them, every op of a multi on its own, next to the protocol's
// minimum) and the bytes its worker allocates (V8's collections over the window). The worker
// processes install the counters (`countOps`, `serveCost`); the coordinator takes a reading
// before and after the drain (`costReading`) and turns them into keys (`costKeys`).
import v8 from 'node:v8';
import { mntr } from './zk-stats.mjs';

/**
 * The fewest server operations a task can cost under the protocol (docs/protocol.md,
 * "Lifecycle"): the queue multi (tree node + entry), the claim multi (entry set at its
 * version + ephemeral working node), the completion multi (record + entry delete + working
 * delete), and one read of the entry's data (a listing names the entry, not its content).
 */
export const MIN_OPS_PER_TASK = { writes: 7, reads: 1, total: 8 };

const WRITE_OPS = ['create', 'set', 'delete'];
const READ_OPS = ['get', 'exists'];
const LIST_OPS = ['children', 'childrenWithStat'];

/**
 * Counts the operations `client` sends from now on: `writes` (a multi's ops each, and
 * single creates, sets and deletes), `reads` (gets and exists), `listings`, `requests` (what
 * the client was asked for: a multi is one) and `checks` (a multi's version checks, writes of
 * nothing). Returns the live counters.
 */
export function countOps(client) {
  const n = { writes: 0, checks: 0, reads: 0, listings: 0, requests: 0 };
  const wrap = (method, count) => {
    const orig = client[method].bind(client);
    client[method] = (...args) => {
      n.requests++;
      count(args);
      return orig(...args);
    };
  };
  for (const m of WRITE_OPS) wrap(m, () => n.writes++);
  for (const m of READ_OPS) wrap(m, () => n.reads++);
  for (const m of LIST_OPS) wrap(m, () => n.listings++);
  wrap('multi', ([ops]) => {
    for (const op of ops) {
      if (op.op === 'check') n.checks++;
      else n.writes++;
    }
  });
  return n;
}

const counted = new WeakMap();

/** `countOps(client)` installed once per client: its counters. */
export function opsOf(client) {
  if (!counted.has(client)) counted.set(client, countOps(client));
  return counted.get(client);
}

/**
 * Bytes allocated on V8's heap since the last call: what the heap grew by plus what every
 * collection in between freed (the collector's own statistics, before and after each).
 */
function allocationMeter() {
  let profiler = new v8.GCProfiler();
  profiler.start();
  let used = v8.getHeapStatistics().used_heap_size;
  return () => {
    const { statistics } = profiler.stop();
    const now = v8.getHeapStatistics().used_heap_size;
    let freed = 0;
    for (const gc of statistics)
      freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    const allocated = now - used + freed;
    profiler = new v8.GCProfiler();
    profiler.start();
    used = now;
    return allocated;
  };
}

/**
 * In a worker process: answers the coordinator's `cost` command with the ops `counters` has
 * seen and the bytes allocated so far (a running total from the first call).
 */
export function serveCost(counters) {
  const since = allocationMeter();
  let allocated = 0;
  process.on('message', (msg) => {
    if (msg.cmd !== 'cost') return;
    allocated += since();
    process.send?.({ type: 'cost', ops: { ...counters }, allocated });
  });
}

/**
 * A reading of every worker's counters, the producer's (`producer`: its `countOps`
 * counters) and the server's request count (`mntr`'s packets received, pings included).
 */
export async function costReading(fleet, connectString, producer) {
  const workers = await Promise.all(
    fleet.workers.map((w) => {
      const answer = fleet.next(w, 'cost');
      w.child.send({ cmd: 'cost' });
      return answer;
    }),
  );
  const sum = { writes: 0, checks: 0, reads: 0, listings: 0, requests: 0, allocated: 0 };
  for (const { ops, allocated } of workers) {
    for (const k of Object.keys(ops)) sum[k] += ops[k];
    sum.allocated += allocated;
  }
  const server = await mntr(connectString).catch(() => ({}));
  return {
    workers: sum,
    producer: { ...producer },
    serverPackets: server.zk_packets_received ?? null,
  };
}

/** What the drain of `tasks` between two readings cost per task. */
export function costKeys(from, to, tasks) {
  const per = (a, b) => Number(((b - a) / tasks).toFixed(3));
  const w = (k) => per(from.workers[k], to.workers[k]);
  const p = (k) => per(from.producer[k], to.producer[k]);
  const workerOps = w('writes') + w('checks') + w('reads') + w('listings');
  const producerOps = p('writes') + p('checks') + p('reads') + p('listings');
  return {
    opsPerTask: Number((workerOps + producerOps).toFixed(3)),
    minOpsPerTask: MIN_OPS_PER_TASK.total,
    ops: {
      worker_writes: w('writes'),
      worker_checks: w('checks'),
      worker_reads: w('reads'),
      worker_listings: w('listings'),
      worker_requests: w('requests'),
      producer_writes: p('writes'),
      producer_reads: p('reads') + p('listings'),
      producer_requests: p('requests'),
    },
    serverRequestsPerTask:
      from.serverPackets === null || to.serverPackets === null
        ? null
        : per(from.serverPackets, to.serverPackets),
    workerAllocatedBytesPerTask: Math.round(
      (to.workers.allocated - from.workers.allocated) / tasks,
    ),
  };
}

/**
 * The drain's cost keys for the full run's document: `zk_ops_per_task` among the results,
 * the rest in `details`, and the table's rows (CPU per task too, from the drain itself).
 */
export function costSections(drain) {
  const { cost } = drain;
  const results = { zk_ops_per_task: cost.opsPerTask };
  const details = {
    zk_ops_min_per_task: cost.minOpsPerTask,
    drain_ops_per_task: cost.ops,
    drain_zk_requests_per_task: cost.serverRequestsPerTask,
    drain_worker_alloc_bytes_per_task: cost.workerAllocatedBytesPerTask,
  };
  const rows = [
    [
      'drain: workers / server CPU µs per task',
      `${Math.round(drain.workerCpuUsPerTask)} / ${drain.zkCpuUsPerTask === null ? '?' : Math.round(drain.zkCpuUsPerTask)}`,
    ],
    ['drain: ZooKeeper ops per task (minimum)', `${cost.opsPerTask} (${cost.minOpsPerTask})`],
    ['drain: worker KB allocated per task', (cost.workerAllocatedBytesPerTask / 1024).toFixed(1)],
  ];
  return { results, details, rows };
}
