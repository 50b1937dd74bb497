// Bench phases about how workers wait and choose (see bench/README.md):
// - idleRequests: the requests idle workers send, from the server's own counters;
// - unblockLatency: a parent completes -> its child starts, with lower-priority roots pending.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { floorWindow, newWorld, percentile, pipelined, wallNow } from './tools.mjs';
import { mntr } from './zk-stats.mjs';

/** Waits until `cond()` holds, checking every 5 ms; fails after `timeoutMs`. */
async function waitFor(cond, label, timeoutMs = 300_000) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${label}: not reached within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** `zk_packets_received` of the server's `mntr`: every request and ping it was sent. */
async function packetsReceived(hostPort) {
  const packets = (await mntr(hostPort)).zk_packets_received;
  if (packets === undefined) throw new Error(`mntr of ${hostPort} has no zk_packets_received`);
  return packets;
}

/** Packets the server received during `seconds` from now. */
async function packetsDuring(hostPort, seconds) {
  const p0 = await packetsReceived(hostPort);
  await sleep(seconds * 1000);
  return (await packetsReceived(hostPort)) - p0;
}

/**
 * Requests per second per idle worker, beyond pings. First the same connections with no
 * worker loop running are counted for `seconds` (what they send then is session pings);
 * then the workers run, idle, on an empty world, and are counted for as long again after a
 * warm-up. The difference, per worker and second, is what idling costs.
 */
export async function idleRequests(c, fleet, hostPort, seconds) {
  const world = 'idle';
  await newWorld(c, world);
  const pings = await packetsDuring(hostPort, seconds);
  await fleet.run(world);
  // Registration, bucket ownership and each worker's first look at every bucket.
  await sleep(5000);
  const idle = await packetsDuring(hostPort, seconds);
  await fleet.stop();
  return {
    perWorkerPerSecond: Math.max(0, idle - pings) / fleet.workers.length / seconds,
    seconds,
    pingPackets: pings,
    idlePackets: idle,
  };
}

/** How long a root of the unblock phase holds its worker slot. */
const ROOT_HOLD_MS = 1000;

/**
 * Parent -> child start latency: `rate` chains a second (a priority-10 parent and its
 * priority-10 child) while about `pending` priority-0 roots are kept pending, so the workers'
 * slots are full of lower-priority work the whole time. A child becomes runnable when both its
 * parent has completed and its own queue call returned; the latency is from the later of the
 * two to its handler's start. The first second is warm-up.
 */
export async function unblockLatency(c, fleet, { rate, seconds, pending, width }) {
  const world = 'unblock';
  const engine = await newWorld(c, world);
  let roots = 0;
  // Roots hold their slot for a while: the slots stay full of lower-priority work while the
  // server stays far from saturated, so what is measured is the choice, not a write queue.
  const queueRoot = () =>
    engine.queue({ name: `u${roots++}`, type: 'hold', data: { ms: ROOT_HOLD_MS } });
  await pipelined(pending, width, queueRoot);
  const chains = rate * seconds;
  let chainsQueued = 0;
  let topping = true;
  const topUp = (async () => {
    while (topping) {
      const deficit = pending - (roots + 2 * chainsQueued - fleet.completed());
      if (deficit > 0) await pipelined(Math.min(deficit, width), 200, queueRoot);
      else await sleep(5);
    }
  })();
  await fleet.run(world);
  const childQueued = new Map();
  const interval = 1000 / rate;
  const t0 = performance.now();
  const queued = [];
  // What bounds the key, in the same window after the warm-up: the workers' lone writes
  // (bench/worker.mjs) and the machine's busy share.
  let floor = null;
  for (let i = 0; i < chains; i++) {
    const wait = t0 + i * interval - performance.now();
    if (wait > 1) await sleep(wait);
    if (i === rate) {
      floor = floorWindow(fleet);
    }
    chainsQueued++;
    queued.push(
      (async () => {
        await engine.queue({ name: `c${i}`, type: 'noop', data: { chain: i }, priority: 10 });
        await engine.queue({
          name: 'child',
          type: 'noop',
          parent: { key: [`c${i}`] },
          data: { chain: i, child: true },
          priority: 10,
        });
        childQueued.set(i, wallNow());
      })(),
    );
  }
  await Promise.all(queued);
  const busy = floor.busy();
  const serverWrite = await floor.serverWrite();
  const offered = chains / ((performance.now() - t0) / 1000);
  await waitFor(() => fleet.unblock.children.size >= chains, `${world}: every child started`);
  const loneWrite = floor.loneWrite();
  topping = false;
  await topUp;
  await fleet.stop();
  const { parents, children } = fleet.unblock;
  const samples = [];
  for (let i = rate; i < chains; i++) {
    const start = children.get(i);
    const done = parents.get(i);
    if (start === undefined || done === undefined) continue;
    samples.push(start - Math.max(done, childQueued.get(i)));
  }
  samples.sort((a, b) => a - b);
  return {
    offered,
    rate,
    pending,
    samples: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples[samples.length - 1],
    loneWrite,
    serverWrite,
    busy,
  };
}

/** Targets of the idle and unblock keys (bench/README.md). */
const TARGETS = { idleRequestsPerS: 1, unblockP99Ms: 25 };

/**
 * The idle and unblock phases' part of the results: keys, target checks
 * (`[name, value, goal, ok]`), details and table rows, as bench/run.mjs assembles them.
 */
export function schedulingKeys(idle, unblock, workers) {
  const results = {
    idle_requests_per_s_per_worker: Number(idle.perWorkerPerSecond.toFixed(3)),
    unblock_p99_ms: Number(unblock.p99.toFixed(2)),
  };
  const checks = [
    [
      'idle requests/s per worker',
      results.idle_requests_per_s_per_worker,
      `<= ${TARGETS.idleRequestsPerS}`,
      results.idle_requests_per_s_per_worker <= TARGETS.idleRequestsPerS,
    ],
    [
      'parent done -> child start p99',
      results.unblock_p99_ms,
      `<= ${TARGETS.unblockP99Ms}`,
      results.unblock_p99_ms <= TARGETS.unblockP99Ms,
    ],
  ];
  const details = {
    idle_seconds: idle.seconds,
    idle_ping_packets: idle.pingPackets,
    idle_packets: idle.idlePackets,
    unblock_offered_chains_per_s: Number(unblock.offered.toFixed(1)),
    unblock_pending_roots: unblock.pending,
    unblock_samples: unblock.samples,
    unblock_p50_ms: Number(unblock.p50.toFixed(2)),
    unblock_max_ms: Number(unblock.max.toFixed(2)),
    unblock_write_alone_p50_ms: unblock.loneWrite.p50,
    unblock_write_alone_p99_ms: unblock.loneWrite.p99,
    unblock_server_write_p50_ms: unblock.serverWrite.p50,
    unblock_server_write_p99_ms: unblock.serverWrite.p99,
    unblock_machine_busy: unblock.busy,
  };
  const rows = [
    [`idle requests/s per worker (${workers} idle)`, results.idle_requests_per_s_per_worker],
    [`parent done->child start p99 ms (${unblock.rate}/s)`, results.unblock_p99_ms],
  ];
  return { results, checks, details, rows };
}
