// zoott benchmark: `pnpm bench` (builds first) or `node bench/run.mjs [--json] [--quick] [--scale]`.
// Starts its own standalone ZooKeeper, forks 4 worker processes (bench/worker.mjs) and
// measures, in one run, the numbers of bench/README.md. Progress goes to stderr; the table
// (or with --json the JSON document) to stdout; the document also to bench/results/latest.json.
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { connectZk } from '../packages/zk-adapter/dist/index.js';
import { startZooKeeper } from '../packages/zk-testkit/dist/index.js';
import { amqpSoakPhase } from './amqp-soak.mjs';
import { bareQueueOps, prepareBarePath } from './bare-path.mjs';
import { controlPhases } from './control.mjs';
import { jobPhases } from './jobs.mjs';
import { recoveryPhase } from './recovery.mjs';
import { idleRequests, schedulingKeys, unblockLatency } from './scheduling.mjs';
import { tlsCost, tlsRows } from './tls.mjs';
import {
  confirm,
  floorWindow,
  log,
  newWorld,
  percentile,
  pipelined,
  spread,
  waitCompleted,
  wallNow,
  windowCpu,
  writeResults,
} from './tools.mjs';
import { tracedDrain } from './tracing.mjs';
import { mntr, serverPid } from './zk-stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = new Set(process.argv.slice(2));
const asJson = args.has('--json');
// --quick: a smoke run with small counts (checks the harness, not the targets).
const quick = args.has('--quick');
const scale = (n) => (quick ? Math.max(100, Math.floor(n / 20)) : n);

const WORKERS = 4;
const CONCURRENCY = 128;
const RAW_CREATES = scale(40_000);
const DRAIN_TASKS = scale(20_000);
/**
 * Tasks drained, in a world of their own, before the measured drain: the workers' warm-up
 * (JIT, buffers), as the raw creates get theirs (the same count), so the drain ratio compares
 * two warm figures. A worker daemon runs for long; a cold first drain costs it more CPU per
 * task (`details.drain_warmup_worker_cpu_us_per_task`).
 */
const DRAIN_WARMUP = scale(5_000);
const TREE = quick ? [10, 10, 10] : [100, 10, 10];
const LATENCY_RATE = 200;
const LATENCY_SECONDS = quick ? 3 : 15;
const LATENCY_WARMUP_S = 1;
const PENDING_WINDOW = scale(20_000);
const PENDING_LEVELS = quick ? [1_000, 5_000] : [1_000, 100_000];
const QUEUE_WIDTH = 1_000;
const IDLE_SECONDS = quick ? 5 : 30;
const UNBLOCK = {
  rate: 200,
  seconds: quick ? 3 : 15,
  pending: quick ? 1_000 : 10_000,
  width: QUEUE_WIDTH,
};
const QUEUE_MANY_TASKS = scale(40_000);
/** Tasks per `queueMany` call, and calls in flight, in the queue-many phase. */
const QUEUE_MANY_CALL = 1_000;
const QUEUE_MANY_WIDTH = 4;
/** The TLS phase (bench/tls.mjs): raw creates and drained tasks per transport and turn. */
const TLS = { rawCount: scale(20_000), drainCount: scale(10_000), width: QUEUE_WIDTH };

// The flags a memory-conscious deployment runs workers with (see apps/worker/README.md): a
// smaller young generation keeps a busy worker's RSS ~20 MB lower.
// BENCH_WORKER_FLAGS replaces them (space-separated; empty for Node's defaults).
const WORKER_NODE_FLAGS =
  process.env.BENCH_WORKER_FLAGS === undefined
    ? ['--max-semi-space-size=4']
    : process.env.BENCH_WORKER_FLAGS.split(/\s+/).filter(Boolean);

const TARGETS = {
  drainVsRaw: 0.45,
  queueManyVsRaw: 1.0,
  pendingRatio: 0.7,
  p99Ms: 10,
  rssMb: 150,
};

/** The worker processes and what they last reported. */
class Fleet {
  constructor(connectString) {
    this.workers = [];
    this.connectString = connectString;
    this.latencies = [];
    this.loneWrites = [];
    this.errors = [];
    this.unblock = { parents: new Map(), children: new Map() };
  }

  async start(n) {
    const execArgv = [
      ...WORKER_NODE_FLAGS,
      ...(process.env.BENCH_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
        : []),
    ];
    await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const child = fork(path.join(here, 'worker.mjs'), [this.connectString, String(i)], {
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          execArgv,
        });
        const w = { child, completed: 0, rss: 0, maxRss: 0, waiters: [] };
        this.workers.push(w);
        child.on('message', (m) => {
          if (m.type === 'stats') {
            w.completed = m.completed;
            w.rss = m.rss;
            w.heapTotal = m.heapTotal;
            w.external = m.external;
            w.maxRss = Math.max(w.maxRss, m.maxRss);
            if (m.latencies) this.latencies.push(...m.latencies);
            if (m.loneWrites) this.loneWrites.push(...m.loneWrites);
            for (const [i, t] of m.parents ?? []) this.unblock.parents.set(i, t);
            for (const [i, t] of m.children ?? []) this.unblock.children.set(i, t);
          } else if (m.type === 'error') {
            this.errors.push(m.error);
          }
          const waiters = w.waiters;
          w.waiters = [];
          for (const wake of waiters) wake(m);
        });
        return this.next(w, 'ready').then((m) => {
          w.execArgv = m.execArgv;
          w.heapRoom = m.heapRoom;
        });
      }),
    );
  }

  /** The Node flags and heap room the worker processes report they run with. */
  setup() {
    const w = this.workers[0];
    return { worker_node_flags: w?.execArgv ?? null, worker_heap_room: w?.heapRoom ?? null };
  }

  next(w, type) {
    return new Promise((resolve, reject) => {
      const onExit = (code) => reject(new Error(`worker exited (${code}) waiting for ${type}`));
      const wait = (m) => {
        if (m.type !== type) return w.waiters.push(wait);
        w.child.off('exit', onExit);
        resolve(m);
      };
      w.waiters.push(wait);
      w.child.once('exit', onExit);
    });
  }

  /** Starts the workers' zoott loops on `world` (`extra`: more of the run, as `trace`). */
  run(world, extra = {}) {
    this.flushSpans = extra.trace !== undefined;
    return this.begin({ cmd: 'run', world, concurrency: CONCURRENCY, ...extra });
  }

  /** Starts the workers on the bare path instead (bench/bare-path.mjs). */
  runBare() {
    return this.begin({ cmd: 'bare' });
  }

  async begin(msg) {
    for (const w of this.workers) {
      w.completed = 0;
      w.maxRss = 0;
    }
    this.latencies = [];
    this.loneWrites = [];
    this.unblock = { parents: new Map(), children: new Map() };
    await Promise.all(
      this.workers.map((w) => {
        const running = this.next(w, 'running');
        w.child.send(msg);
        return running;
      }),
    );
  }

  async stop() {
    await Promise.all(
      this.workers.map((w) => {
        const stopped = this.next(w, 'stopped');
        w.child.send({ cmd: 'stop', flushSpans: this.flushSpans === true });
        return stopped;
      }),
    );
  }

  /** Each worker's CPU time so far (µs, user + system), asked over IPC. */
  async cpuUs() {
    return Promise.all(
      this.workers.map(async (w) => {
        const answer = this.next(w, 'cpu');
        w.child.send({ cmd: 'cpu' });
        return (await answer).us;
      }),
    );
  }

  completed() {
    return this.workers.reduce((n, w) => n + w.completed, 0);
  }

  /**
   * Each worker's heap after a full collection (V8's statistics), and with `dir` a heap
   * snapshot of each in it, named by `label` (BENCH_HEAP_SNAPSHOTS in the scale mode).
   */
  async heap(dir, label) {
    return Promise.all(
      this.workers.map((w, i) => {
        const got = this.next(w, 'heap');
        w.child.send({
          cmd: 'heap',
          file: dir ? path.join(dir, `${label}-w${i}.heapsnapshot`) : null,
        });
        return got;
      }),
    );
  }

  /** The memory of the worker with the largest RSS now: V8's heap and the memory outside it. */
  largestNow() {
    const w = this.workers.reduce((a, b) => (b.rss > a.rss ? b : a));
    const mb = (n) => Math.round((n ?? 0) / 2 ** 20);
    const each = this.workers.map((x) => mb(x.maxRss)).join('/');
    return `RSS ${mb(w.rss)} MB: heap ${mb(w.heapTotal)}, external ${mb(w.external)}; peak each ${each}`;
  }

  maxRssMb() {
    return Math.max(...this.workers.map((w) => w.maxRss)) / 2 ** 20;
  }

  async exit() {
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise((resolve) => {
            if (w.child.exitCode !== null) return resolve();
            w.child.once('exit', resolve);
            w.child.send({ cmd: 'exit' });
            setTimeout(() => w.child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
  }
}

async function rawCreates(c) {
  await c.create('/bench');
  await c.create('/bench/raw');
  const once = async (n) => {
    const t0 = performance.now();
    await pipelined(n, QUEUE_WIDTH, () =>
      c.create('/bench/raw/n-', undefined, { sequential: true }),
    );
    return n / ((performance.now() - t0) / 1000);
  };
  await once(Math.min(5_000, RAW_CREATES)); // warm-up: JIT, connection buffers
  return once(RAW_CREATES);
}

/** Queues `total` independent no-op tasks into `world`, then drains them (see `drain`). */
function drainTasks(c, fleet, world, total, run) {
  return drain(
    c,
    fleet,
    world,
    total,
    (e) => pipelined(total, QUEUE_WIDTH, (i) => e.queue({ name: `d${i}`, type: 'noop', data: i })),
    run,
  );
}

async function drain(c, fleet, world, total, queueAll, run) {
  const engine = await newWorld(c, world);
  const q0 = performance.now();
  await queueAll(engine);
  const queueMs = performance.now() - q0;
  log(`${world}: queued ${total} in ${(queueMs / 1000).toFixed(1)} s; draining`);
  const zkPid = await serverPid(fleet.connectString);
  const cpu0 = await windowCpu(fleet, zkPid);
  const t0 = performance.now();
  await fleet.run(world, run);
  await waitCompleted(fleet, total, world);
  const seconds = (performance.now() - t0) / 1000;
  // CPU time per task: what the workers (all 4 together) and the server spent per drained
  // task. Unlike the rate it hardly moves with the machine's other load.
  const cpu = (await windowCpu(fleet, zkPid)).since(cpu0, total);
  await fleet.stop();
  await confirm(engine, total, world);
  return {
    perSecond: total / seconds,
    seconds,
    queuePerSecond: total / (queueMs / 1000),
    workerCpuUsPerTask: cpu.workersUsPerTask,
    zkCpuUsPerTask: cpu.serverUsPerTask,
  };
}

/**
 * Producer throughput through `queueMany`: many tasks per transaction, a few calls in flight.
 * The tasks stay pending (their count is checked); nothing drains them.
 */
async function queueMany(c) {
  const engine = await newWorld(c, 'queuemany');
  const calls = Math.ceil(QUEUE_MANY_TASKS / QUEUE_MANY_CALL);
  const t0 = performance.now();
  await pipelined(calls, QUEUE_MANY_WIDTH, (k) =>
    engine.queueMany(
      Array.from(
        { length: Math.min(QUEUE_MANY_CALL, QUEUE_MANY_TASKS - k * QUEUE_MANY_CALL) },
        (_, i) => ({
          name: `m${k * QUEUE_MANY_CALL + i}`,
          type: 'noop',
          data: i,
        }),
      ),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  const counts = await engine.counts();
  if (counts.pending !== QUEUE_MANY_TASKS)
    throw new Error(`queuemany: ${counts.pending} pending, expected ${QUEUE_MANY_TASKS}`);
  return { perSecond: QUEUE_MANY_TASKS / seconds, seconds };
}

/**
 * Writes `write(i)` for i in [0, LATENCY_RATE x LATENCY_SECONDS), paced at LATENCY_RATE, and
 * waits until the workers have started every task; the samples are the workers' reported
 * latencies after the warm-up (connections, JIT, first listings). What bounds them is measured
 * in the same window: the producer's write round trips, the workers' lone writes (see
 * bench/worker.mjs), the server's own write latency, the machine's busy share and the CPU
 * time each part spent per task.
 */
async function paced(fleet, label, write) {
  const total = LATENCY_RATE * LATENCY_SECONDS;
  const skip = LATENCY_RATE * LATENCY_WARMUP_S;
  const zkPid = await serverPid(fleet.connectString);
  const writeMs = [];
  const written = [];
  let floor = null;
  let cpu0 = null;
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / LATENCY_RATE - performance.now();
    if (wait > 1) await sleep(wait);
    if (i === skip) {
      floor = floorWindow(fleet);
      cpu0 = await windowCpu(fleet, zkPid);
    }
    const w0 = performance.now();
    const w = write(i, { t: wallNow(), i });
    if (i >= skip) w.then(() => writeMs.push(performance.now() - w0));
    written.push(w);
  }
  await Promise.all(written);
  const busy = floor.busy();
  const cpu = (await windowCpu(fleet, zkPid)).since(cpu0, total - skip);
  const serverWrite = await floor.serverWrite();
  const offered = total / ((performance.now() - t0) / 1000);
  await waitCompleted(fleet, total, label);
  await sleep(200); // last latency reports
  await fleet.stop();
  const sorted = fleet.latencies.slice(skip).sort((a, b) => a - b);
  return {
    total,
    offered,
    samples: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
    queue: spread(writeMs),
    loneWrite: floor.loneWrite(),
    serverWrite,
    busy,
    cpu,
  };
}

async function latency(c, fleet) {
  const world = 'latency';
  const engine = await newWorld(c, world);
  await fleet.run(world);
  await sleep(1000); // registration and bucket ownership settle
  const res = await paced(fleet, world, (i, data) =>
    engine.queue({ name: `l${i}`, type: 'noop', data }),
  );
  await confirm(engine, res.total, world);
  return res;
}

/**
 * The latency phase's floor (bench/bare-path.mjs): the same rate, stamps and warm-up, with a
 * bare client's fewest round trips in place of zoott, on the same server and workers.
 */
async function latencyFloor(c, fleet) {
  await prepareBarePath(c, WORKERS);
  await fleet.runBare();
  return paced(fleet, 'latency floor', (i, data) =>
    c.multi(bareQueueOps(i, WORKERS, Buffer.from(JSON.stringify(data)))),
  );
}

/**
 * Throughput while about `level` tasks are pending: pre-queue `level`, then keep topping up
 * so the pending count stays there, and time PENDING_WINDOW completions after a warm-up.
 */
async function pendingLevel(c, fleet, level) {
  const world = `pending${level}`;
  const engine = await newWorld(c, world);
  let queued = 0;
  const queueOne = () => {
    const i = queued++;
    return engine.queue({ name: `p${i}`, type: 'noop', data: i });
  };
  const q0 = performance.now();
  await pipelined(level, QUEUE_WIDTH, queueOne);
  log(`${world}: queued ${level} in ${((performance.now() - q0) / 1000).toFixed(1)} s; draining`);
  const warmup = Math.min(1_000, Math.floor(level / 2));
  const target = warmup + PENDING_WINDOW;
  let topping = true;
  const topUp = (async () => {
    while (topping) {
      const deficit = level - (queued - fleet.completed());
      if (deficit > 0 && queued < target + level) {
        await pipelined(Math.min(deficit, QUEUE_WIDTH), 200, queueOne);
      } else await sleep(5);
    }
  })();
  await fleet.run(world);
  await waitCompleted(fleet, warmup, world);
  const t0 = performance.now();
  const c0 = fleet.completed();
  await waitCompleted(fleet, target, world);
  const perSecond = (fleet.completed() - c0) / ((performance.now() - t0) / 1000);
  const rssMb = fleet.maxRssMb();
  topping = false;
  await topUp;
  await fleet.stop();
  const counts = await engine.counts();
  return { perSecond, rssMb, pendingAtEnd: counts.pending, queued };
}

/** 100 roots x 10 children x 10 grandchildren queued first, then drained. */
async function treeDrain(c, fleet) {
  const [roots, kids, grandkids] = TREE;
  const treeTotal = roots + roots * kids + roots * kids * grandkids;
  const res = await drain(c, fleet, 'tree', treeTotal, async (e) => {
    await pipelined(roots, QUEUE_WIDTH, (r) => e.queue({ name: `r${r}`, type: 'noop' }));
    await pipelined(roots * kids, QUEUE_WIDTH, (i) =>
      e.queue({ name: `k${i % kids}`, type: 'noop' }, { key: [`r${Math.floor(i / kids)}`] }),
    );
    await pipelined(roots * kids * grandkids, QUEUE_WIDTH, (i) => {
      const r = Math.floor(i / (kids * grandkids));
      const k = Math.floor(i / grandkids) % kids;
      return e.queue({ name: `g${i % grandkids}`, type: 'noop' }, { key: [`r${r}`, `k${k}`] });
    });
  });
  return { ...res, tasks: treeTotal };
}

/** Runs `fn` against a ZooKeeper and worker fleet of its own, stopped afterwards. */
async function onFreshServer(fn) {
  const server = await startZooKeeper({ own: true });
  const c = await connectZk(server.connectString, { sessionTimeoutMs: 30_000 });
  const fleet = new Fleet(server.connectString);
  try {
    await fleet.start(WORKERS);
    return await fn(c, fleet);
  } finally {
    await fleet.exit().catch(() => undefined);
    await c.close().catch(() => undefined);
    await server.stop();
  }
}

function verdict(ok) {
  return ok ? 'PASS' : 'FAIL';
}

async function main() {
  // BENCH_ONLY=jobs: the job runner's phase alone (no ZooKeeper), as JSON.
  if (process.env.BENCH_ONLY === 'jobs') {
    console.log(JSON.stringify(await jobPhases({ quick, log })));
    return;
  }
  // BENCH_ONLY=<phase>: that phase alone, on a server and fleet of its own, as JSON.
  const only = {
    tree: treeDrain,
    unblock: (c2, fleet2) => unblockLatency(c2, fleet2, UNBLOCK),
    // The key, then its floor, on one server (as in the full run).
    latency: async (c2, fleet2) => ({
      ...(await latency(c2, fleet2)),
      floor: await latencyFloor(c2, fleet2),
    }),
    drain: async (c2, fleet2) => {
      const warmup = await drainTasks(c2, fleet2, 'drain-warmup', DRAIN_WARMUP);
      const res = await drainTasks(c2, fleet2, 'drain', DRAIN_TASKS);
      return { ...res, warmupWorkerCpuUsPerTask: warmup.workerCpuUsPerTask };
    },
    // The highest pending level (100,000): its throughput and the workers' RSS.
    pending: (c2, fleet2) => pendingLevel(c2, fleet2, PENDING_LEVELS[PENDING_LEVELS.length - 1]),
    // TLS against plain text, on a server of its own with both ports.
    tls: () => tlsCost({ Fleet, drainTasks, workers: WORKERS, log, ...TLS }),
    // The drain target's two terms in one run, as the full bench measures them.
    ratio: async (c2, fleet2) => {
      const raw = await rawCreates(c2);
      await drainTasks(c2, fleet2, 'drain-warmup', DRAIN_WARMUP);
      const res = await drainTasks(c2, fleet2, 'drain', DRAIN_TASKS);
      return { rawCreatesPerSecond: raw, ...res, drainVsRaw: res.perSecond / raw };
    },
    // The drain untraced and traced, on one server: what tracing costs (bench/tracing.mjs).
    tracing: async (c2, fleet2) => {
      await drainTasks(c2, fleet2, 'drain-warmup', DRAIN_WARMUP);
      const plain = await drainTasks(c2, fleet2, 'drain', DRAIN_TASKS);
      const traced = await tracedDrain(c2, fleet2, drainTasks, {
        total: DRAIN_TASKS,
        warmup: DRAIN_WARMUP,
      });
      return { plain, traced, tracedVsPlain: traced.perSecond / plain.perSecond };
    },
  }[process.env.BENCH_ONLY ?? ''];
  // The recovery phase stops and starts a server of its own: it needs no fleet.
  if (process.env.BENCH_ONLY === 'recovery') {
    console.log(JSON.stringify(await recoveryPhase({ log })));
    return;
  }
  // BENCH_ONLY=amqp: the AMQP bridge soak (bench/amqp-soak.mjs), on a server and broker of its own.
  if (process.env.BENCH_ONLY === 'amqp') {
    console.log(JSON.stringify(await amqpSoakPhase({ quick, log })));
    return;
  }
  if (only) {
    const res = await onFreshServer(async (c2, fleet2) => ({
      ...(await only(c2, fleet2)),
      setup: fleet2.setup(),
    }));
    console.log(JSON.stringify(res));
    return;
  }
  const started = Date.now();
  log('starting ZooKeeper');
  const server = await startZooKeeper({ own: true });
  const zookeeperKind = server.kind;
  const c = await connectZk(server.connectString, { sessionTimeoutMs: 30_000 });
  const fleet = new Fleet(server.connectString);
  try {
    await fleet.start(WORKERS);
    log(`ZooKeeper at ${server.connectString}, ${WORKERS} workers ready`);

    log(`idle: ${WORKERS} workers on an empty world, ${IDLE_SECONDS} s (after as long for pings)`);
    const idle = await idleRequests(c, fleet, server.connectString, IDLE_SECONDS);
    log(`idle: ${idle.perWorkerPerSecond.toFixed(2)} requests/s per worker`);

    log('raw creates');
    const raw = await rawCreates(c);
    log(`raw: ${raw.toFixed(0)} creates/s`);

    // Every drained task stays retained (20,000 is below the default limits): the growth of
    // the server's data size over the drain is what one retained task costs it.
    const warmup = await drainTasks(c, fleet, 'drain-warmup', DRAIN_WARMUP);
    const beforeDrain = await mntr(server.connectString);
    const drainRes = await drainTasks(c, fleet, 'drain', DRAIN_TASKS);
    const afterDrain = await mntr(server.connectString);
    const bytesPerRetained =
      (afterDrain.zk_approximate_data_size - beforeDrain.zk_approximate_data_size) / DRAIN_TASKS;
    log(
      `drain: ${drainRes.perSecond.toFixed(0)} tasks/s, CPU per task: workers ${drainRes.workerCpuUsPerTask.toFixed(0)} µs, server ${drainRes.zkCpuUsPerTask?.toFixed(0) ?? '?'} µs`,
    );

    const treeRes = await treeDrain(c, fleet);
    log(`tree: ${treeRes.perSecond.toFixed(0)} tasks/s`);

    log(`latency: ${LATENCY_RATE} tasks/s for ${LATENCY_SECONDS} s`);
    const lat = await latency(c, fleet);
    log(`latency: p50 ${lat.p50.toFixed(2)} ms, p99 ${lat.p99.toFixed(2)} ms`);
    const floorLat = await latencyFloor(c, fleet);
    log(
      `latency floor (bare client): p50 ${floorLat.p50.toFixed(2)} ms, p99 ${floorLat.p99.toFixed(2)} ms`,
    );
    const control = await controlPhases(c, fleet, server.connectString, { quick, log });
    const jobs = await jobPhases({ quick, log });

    // After the latency phase: its 40,000 pending tasks would otherwise sit on the server
    // (and in its garbage collector) while latency is measured.
    log(`queue-many: ${QUEUE_MANY_TASKS} tasks, ${QUEUE_MANY_CALL} per call`);
    const many = await queueMany(c);
    log(`queue-many: ${many.perSecond.toFixed(0)} tasks/s`);

    // The pending levels run on fresh servers of their own: 100,000 pending tasks (200,000+
    // nodes) on top of the earlier phases' records would measure the server's garbage
    // collector, not the engine.
    await fleet.exit();
    await c.close();
    await server.stop();
    const levels = [];
    for (const level of PENDING_LEVELS) {
      log(`pending ${level}: fresh ZooKeeper and workers`);
      const res = await onFreshServer((c2, fleet2) => pendingLevel(c2, fleet2, level));
      log(
        `pending ${level}: ${res.perSecond.toFixed(0)} tasks/s, worker RSS ${res.rssMb.toFixed(0)} MB`,
      );
      levels.push(res);
    }
    const [low, high] = levels;
    log(`unblock: ${UNBLOCK.rate} chains/s, ${UNBLOCK.pending} lower-priority roots pending`);
    const unblock = await onFreshServer((c2, fleet2) => unblockLatency(c2, fleet2, UNBLOCK));
    const scheduling = schedulingKeys(idle, unblock, WORKERS);
    log(`unblock: p50 ${unblock.p50.toFixed(2)} ms, p99 ${unblock.p99.toFixed(2)} ms`);
    log('recovery: an outage longer than the worker session, on a server of its own');
    const recovery = await recoveryPhase({ log });
    log('tls: raw creates and drain over TLS and in plain text, one server with both ports');
    const tls = await tlsCost({ Fleet, drainTasks, workers: WORKERS, log, ...TLS });
    log(
      `tls: raw ${tls.ratios.tls_raw_vs_plain} and drain ${tls.ratios.tls_drain_vs_plain} of plain text`,
    );
    const amqpSoak = await amqpSoakPhase({ quick, log });

    const results = {
      raw_creates_per_s: Math.round(raw),
      drain_tasks_per_s: Math.round(drainRes.perSecond),
      queue_many_tasks_per_s: Math.round(many.perSecond),
      tree_tasks_per_s: Math.round(treeRes.perSecond),
      latency_p50_ms: Number(lat.p50.toFixed(2)),
      latency_p99_ms: Number(lat.p99.toFixed(2)),
      latency_floor_p50_ms: Number(floorLat.p50.toFixed(2)),
      latency_floor_p99_ms: Number(floorLat.p99.toFixed(2)),
      pending_1k_tasks_per_s: Math.round(low.perSecond),
      pending_100k_tasks_per_s: Math.round(high.perSecond),
      worker_rss_mb: Number(high.rssMb.toFixed(1)),
      ...scheduling.results,
      ...control.results,
      ...jobs.results,
      zk_bytes_per_retained_task: Math.round(bytesPerRetained),
      ...recovery.results,
      ...tls.results,
      ...amqpSoak.results,
    };
    const ratios = {
      drain_vs_raw: results.drain_tasks_per_s / results.raw_creates_per_s,
      queue_many_vs_raw: results.queue_many_tasks_per_s / results.raw_creates_per_s,
      pending_100k_vs_1k: results.pending_100k_tasks_per_s / results.pending_1k_tasks_per_s,
      latency_p99_vs_floor: results.latency_p99_ms / results.latency_floor_p99_ms,
    };
    const checks = [
      [
        'drain / raw creates',
        ratios.drain_vs_raw,
        `>= ${TARGETS.drainVsRaw}`,
        ratios.drain_vs_raw >= TARGETS.drainVsRaw,
      ],
      [
        'queueMany / raw creates',
        ratios.queue_many_vs_raw,
        `>= ${TARGETS.queueManyVsRaw}`,
        ratios.queue_many_vs_raw >= TARGETS.queueManyVsRaw,
      ],
      [
        '100k / 1k pending throughput',
        ratios.pending_100k_vs_1k,
        `>= ${TARGETS.pendingRatio}`,
        ratios.pending_100k_vs_1k >= TARGETS.pendingRatio,
      ],
      [
        'p99 queue->start (ms) at 200/s',
        results.latency_p99_ms,
        `<= ${TARGETS.p99Ms}`,
        results.latency_p99_ms <= TARGETS.p99Ms,
      ],
      [
        'worker RSS (MB), 100k pending',
        results.worker_rss_mb,
        `<= ${TARGETS.rssMb}`,
        results.worker_rss_mb <= TARGETS.rssMb,
      ],
      ...scheduling.checks,
      ...control.checks,
      ...recovery.checks,
    ];
    const doc = {
      ...results,
      ratios: {
        drain_vs_raw: Number(ratios.drain_vs_raw.toFixed(3)),
        queue_many_vs_raw: Number(ratios.queue_many_vs_raw.toFixed(3)),
        pending_100k_vs_1k: Number(ratios.pending_100k_vs_1k.toFixed(3)),
        latency_p99_vs_floor: Number(ratios.latency_p99_vs_floor.toFixed(3)),
        ...jobs.ratios,
        ...recovery.ratios,
        ...tls.ratios,
        ...amqpSoak.ratios,
      },
      pass: Object.fromEntries(checks.map(([name, , , ok]) => [name, ok])),
      details: {
        drain_seconds: Number(drainRes.seconds.toFixed(2)),
        drain_queue_tasks_per_s: Math.round(drainRes.queuePerSecond),
        drain_worker_cpu_us_per_task: Math.round(drainRes.workerCpuUsPerTask),
        drain_warmup_tasks: DRAIN_WARMUP,
        drain_warmup_worker_cpu_us_per_task: Math.round(warmup.workerCpuUsPerTask),
        drain_zk_cpu_us_per_task:
          drainRes.zkCpuUsPerTask === null ? null : Math.round(drainRes.zkCpuUsPerTask),
        queue_many_tasks: QUEUE_MANY_TASKS,
        queue_many_per_call: QUEUE_MANY_CALL,
        queue_many_calls_in_flight: QUEUE_MANY_WIDTH,
        queue_many_seconds: Number(many.seconds.toFixed(2)),
        tree_tasks: treeRes.tasks,
        tree_seconds: Number(treeRes.seconds.toFixed(2)),
        latency_offered_per_s: Number(lat.offered.toFixed(1)),
        latency_samples: lat.samples,
        latency_max_ms: Number(lat.max.toFixed(2)),
        latency_queue_p50_ms: lat.queue.p50,
        latency_queue_p99_ms: lat.queue.p99,
        latency_write_alone_p50_ms: lat.loneWrite.p50,
        latency_write_alone_p99_ms: lat.loneWrite.p99,
        latency_server_write_p50_ms: lat.serverWrite.p50,
        latency_server_write_p99_ms: lat.serverWrite.p99,
        latency_machine_busy: lat.busy,
        latency_workers_cpu_us_per_task: lat.cpu.workersUsPerTask,
        latency_server_cpu_us_per_task: lat.cpu.serverUsPerTask,
        latency_producer_cpu_us_per_task: lat.cpu.producerUsPerTask,
        latency_floor_samples: floorLat.samples,
        pending_levels: PENDING_LEVELS,
        pending_window_tasks: PENDING_WINDOW,
        worker_rss_mb_1k: Number(low.rssMb.toFixed(1)),
        ...scheduling.details,
        ...control.details,
        ...jobs.details,
        ...recovery.details,
        ...tls.details,
        ...amqpSoak.details,
      },
      setup: {
        workers: WORKERS,
        ...fleet.setup(),
        concurrency: CONCURRENCY,
        quick,
        cpus: os.cpus().length,
        load_average_at_start: os.loadavg().map((l) => Number(l.toFixed(2))),
        node: process.version,
        zookeeper: zookeeperKind,
        seconds: Math.round((Date.now() - started) / 1000),
        at: new Date().toISOString(),
      },
    };
    writeResults('latest.json', doc);
    if (asJson) {
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else {
      const rows = [
        ['raw creates/s (1 client, pipelined)', results.raw_creates_per_s],
        [`drain tasks/s (${DRAIN_TASKS} no-op, ${WORKERS} workers)`, results.drain_tasks_per_s],
        [`queueMany tasks/s (${QUEUE_MANY_CALL} per call)`, results.queue_many_tasks_per_s],
        [`tree tasks/s (${TREE.join('x')}, ${treeRes.tasks} tasks)`, results.tree_tasks_per_s],
        [`queue->start p50 ms (${LATENCY_RATE}/s)`, results.latency_p50_ms],
        [`queue->start p99 ms (${LATENCY_RATE}/s)`, results.latency_p99_ms],
        [
          `  bare-client floor p50 / p99 ms`,
          `${results.latency_floor_p50_ms} / ${results.latency_floor_p99_ms}`,
        ],
        [`drain tasks/s, ${PENDING_LEVELS[0]} pending`, results.pending_1k_tasks_per_s],
        [`drain tasks/s, ${PENDING_LEVELS[1]} pending`, results.pending_100k_tasks_per_s],
        [`worker RSS MB, ${PENDING_LEVELS[1]} pending`, results.worker_rss_mb],
        ...scheduling.rows,
        ...control.rows,
        ...jobs.rows,
        ...recovery.rows,
        ['ZooKeeper bytes per retained task', results.zk_bytes_per_retained_task],
        ...tlsRows(tls),
        ...amqpSoak.rows,
      ];
      const out = ['', 'measure                                         value', '-'.repeat(60)];
      for (const [k, v] of rows) out.push(`${k.padEnd(46)} ${String(v).padStart(10)}`);
      out.push('', 'target                            value     goal       result', '-'.repeat(66));
      for (const [name, value, goal, ok] of checks)
        out.push(
          `${name.padEnd(32)} ${value.toFixed(3).padStart(8)}  ${goal.padEnd(9)}  ${verdict(ok)}`,
        );
      out.push(
        '',
        `${doc.setup.seconds} s, ${os.cpus().length} cpus, load at start ${doc.setup.load_average_at_start.join(' ')}`,
      );
      process.stdout.write(`${out.join('\n')}\n`);
    }
  } finally {
    await fleet.exit().catch(() => undefined);
    await c.close().catch(() => undefined);
    await server.stop();
  }
}

// --scale: the million-task run with retention on (bench/scale.mjs), instead of the phases.
const entry = args.has('--scale')
  ? () =>
      import('./scale.mjs').then((m) =>
        m.runScale({
          Fleet,
          log,
          quick,
          asJson,
          workers: WORKERS,
          concurrency: CONCURRENCY,
        }),
      )
  : main;
entry().then(
  () => process.exit(0),
  (err) => {
    log(`failed: ${err?.stack ?? err}`);
    process.exit(1);
  },
);
