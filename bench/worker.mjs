// One benchmark worker process: a zoott worker loop with a no-op handler, driven by the
// coordinator (bench/run.mjs) over the IPC channel. Uses the built packages only.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { createEngine, runWorker } from '../packages/core/dist/index.js';
import { applyHeapRoom, DEFAULT_HEAP_ROOM } from '../packages/jobs/dist/config.js';
import { connectZk } from '../packages/zk-adapter/dist/index.js';
import { serveBarePath } from './bare-path.mjs';
import { flushSpans, workerTelemetry } from './tracing.mjs';

const [connectString, index] = process.argv.slice(2);
// What zoott-worker does at start (its --heap-room setting, default DEFAULT_HEAP_ROOM), so the
// bench's RSS is a real worker's; BENCH_HEAP_ROOM sets another value (0: V8's own choice).
const heapRoom = Number(process.env.BENCH_HEAP_ROOM ?? DEFAULT_HEAP_ROOM);
applyHeapRoom(heapRoom);
const quiet = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} };
/** Wall-clock ms with sub-ms precision, comparable across processes on one machine. */
const wallNow = () => performance.timeOrigin + performance.now();

// Over TLS when the coordinator says so (bench/tls.mjs): the CA to check the server with.
const tlsCa = process.env.BENCH_ZK_TLS_CA;
const client = await connectZk(connectString, {
  sessionTimeoutMs: 30_000,
  ...(tlsCa ? { tls: { ca: readFileSync(tlsCa) } } : {}),
});
/**
 * What one write costs the server at the phase's load, as this worker sees it: the round trip
 * of each multi (claim or completion) sent while none of this client's own requests was
 * outstanding, so it waited behind nothing of its own (ZooKeeper serves a session's requests
 * in order). The latency and unblock phases report these next to their keys.
 */
let outstanding = 0;
let loneWrites = [];
/** The Coordinator methods the engine sends requests through. */
const METHODS = [
  'get',
  'exists',
  'create',
  'set',
  'delete',
  'multi',
  'children',
  'childrenWithStat',
];
for (const m of METHODS) {
  const orig = client[m].bind(client);
  client[m] = (...args) => {
    const alone = m === 'multi' && outstanding === 0;
    const t0 = alone ? performance.now() : 0;
    outstanding++;
    return orig(...args).finally(() => {
      outstanding--;
      if (alone) loneWrites.push(performance.now() - t0);
    });
  };
}
/**
 * BENCH_COUNT_CALLS=1: counts this worker's requests by method (a multi's ops, the names a
 * listing returned) and prints them to stderr at each stop: what one task costs in requests.
 */
const calls = process.env.BENCH_COUNT_CALLS ? {} : null;
if (calls) {
  const count = (k, n = 1) => {
    calls[k] = (calls[k] ?? 0) + n;
  };
  for (const m of METHODS) {
    const orig = client[m].bind(client);
    client[m] = async (...args) => {
      count(m);
      if (m === 'multi') count('multi_ops', args[0].length);
      const out = await orig(...args);
      if (m === 'children') count('children_names', out.length);
      if (m === 'childrenWithStat') count('children_names', out.children.length);
      return out;
    };
  }
}
let handle = null;
/** The bare path's tree watch while it serves (the `bare` command), and its completions. */
let bare = null;
let latencies = [];
let maxRss = 0;
/** Chains of the unblock phase: [chain, wall ms] of parent completions and child starts. */
let parents = [];
let children = [];

const handlers = {
  // Records queue->start latency when the producer stamped the task; does nothing else.
  noop: (task) => {
    const t = task.data?.t;
    if (typeof t === 'number') latencies.push(wallNow() - t);
    if (task.data?.child === true) children.push([task.data.chain, wallNow()]);
  },
  // Holds its slot for `data.ms` without loading the server: lower-priority work that keeps
  // every slot busy (the unblock phase).
  hold: (task) => new Promise((resolve) => setTimeout(resolve, task.data?.ms ?? 0)),
};

let reports = 0;
let heap = {};
function report() {
  const rss = process.memoryUsage.rss();
  // The heap's figures once a second: memoryUsage() also walks the heap spaces, a cost every
  // 50 ms the drain would pay.
  if (reports++ % 20 === 0) {
    const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    heap = { heapUsed, heapTotal, external, arrayBuffers };
  }
  maxRss = Math.max(maxRss, rss);
  process.send?.({
    type: 'stats',
    completed: bare?.completed ?? handle?.stats.completed ?? 0,
    claimed: handle?.stats.claimed ?? 0,
    rss,
    maxRss,
    ...heap,
    latencies: latencies.length > 0 ? latencies.splice(0) : undefined,
    loneWrites: loneWrites.length > 0 ? loneWrites.splice(0) : undefined,
    parents: parents.length > 0 ? parents.splice(0) : undefined,
    children: children.length > 0 ? children.splice(0) : undefined,
  });
}
const ticker = setInterval(report, 50);

/**
 * BENCH_HEAP_PROF=<dir>: a sampling allocation profile of each run (from `run` to `stop`),
 * counting the objects collected since, too: where the garbage the collector works through
 * comes from (`--heap-prof` keeps only what is still alive at exit).
 */
const heapProfDir = process.env.BENCH_HEAP_PROF;
const inspector = heapProfDir ? new Session() : null;
inspector?.connect();
let runs = 0;

process.on('message', async (msg) => {
  if (msg.cmd === 'run') {
    await inspector?.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    latencies = [];
    loneWrites = [];
    parents = [];
    children = [];
    maxRss = 0;
    // A traced run (bench/tracing.mjs): the engine traces through the SDK.
    const traced = msg.trace
      ? {
          engine: createEngine(client, {
            world: msg.world,
            logger: quiet,
            telemetry: await workerTelemetry(msg.trace),
          }),
        }
      : {};
    handle = runWorker(client, handlers, {
      ...traced,
      world: msg.world,
      id: `bench-${index}`,
      concurrency: msg.concurrency,
      logger: quiet,
      pid: process.pid,
      // BENCH_REAPER_LOG=1: one stderr line per pass of the elected reaper.
      ...(process.env.BENCH_REAPER_LOG
        ? {
            retention: {
              onPass: (r) => {
                if (r.leader)
                  process.stderr.write(
                    `[reaper ${index}] ${Date.now() % 1e6} removed ${r.records} kept ${r.completedKept} skipped ${r.skipped}\n`,
                  );
              },
            },
          }
        : {}),
    });
    handle.done.catch((err) => process.send?.({ type: 'error', error: String(err) }));
    // A parent of the unblock phase is complete once its completion is recorded.
    handle.on('completed', (e) => {
      const d = e.data;
      if (typeof d?.chain === 'number' && d.child !== true) parents.push([d.chain, wallNow()]);
    });
    process.send?.({ type: 'running' });
  } else if (msg.cmd === 'bare') {
    latencies = [];
    loneWrites = [];
    const served = { completed: 0, stop: null };
    served.stop = await serveBarePath(
      client,
      index,
      (data) => {
        const t = JSON.parse(Buffer.from(data).toString()).t;
        latencies.push(wallNow() - t);
      },
      () => served.completed++,
    );
    bare = served;
    process.send?.({ type: 'running' });
  } else if (msg.cmd === 'cpu') {
    // The process's CPU time so far (user + system, µs): the coordinator takes the difference
    // over a phase, a cost per task that moves far less with the machine's load than a rate.
    const { user, system } = process.cpuUsage();
    process.send?.({ type: 'cpu', us: user + system });
  } else if (msg.cmd === 'stop') {
    await handle?.stop();
    bare?.stop();
    if (msg.flushSpans) await flushSpans();
    if (inspector) {
      const { profile } = await inspector.post('HeapProfiler.stopSampling');
      writeFileSync(
        `${heapProfDir}/worker-${index}-run-${runs++}-${process.pid}.heapprofile`,
        JSON.stringify(profile),
      );
    }
    report();
    handle = null;
    bare = null;
    if (calls) {
      process.stderr.write(`[worker ${index}] calls ${JSON.stringify(calls)}\n`);
      for (const k of Object.keys(calls)) delete calls[k];
    }
    process.send?.({ type: 'stopped' });
  } else if (msg.cmd === 'heap') {
    // A heap snapshot (its full collection first, so it holds live objects only) and V8's
    // heap statistics after it: what the worker really keeps, as opposed to heap room.
    const file = msg.file ? v8.writeHeapSnapshot(msg.file) : null;
    process.send?.({
      type: 'heap',
      file,
      stats: v8.getHeapStatistics(),
      rss: process.memoryUsage().rss,
    });
  } else if (msg.cmd === 'exit') {
    clearInterval(ticker);
    await handle?.stop();
    await client.close();
    process.disconnect?.();
    process.exit(0);
  }
});
// What this process really runs with, for the results' `setup`.
process.send?.({ type: 'ready', execArgv: process.execArgv, heapRoom });
