// One benchmark worker process: a zoott worker loop with a no-op handler, driven by the
// coordinator (bench/run.mjs) over the IPC channel. Uses the built packages only.
import { performance } from 'node:perf_hooks';
import { runWorker } from '../packages/core/dist/index.js';
import { connectZk } from '../packages/zk-adapter/dist/index.js';

const [connectString, index] = process.argv.slice(2);
const quiet = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} };
/** Wall-clock ms with sub-ms precision, comparable across processes on one machine. */
const wallNow = () => performance.timeOrigin + performance.now();

const client = await connectZk(connectString, { sessionTimeoutMs: 30_000 });
let handle = null;
let latencies = [];
let maxRss = 0;

const handlers = {
  // Records queue->start latency when the producer stamped the task; does nothing else.
  noop: (task) => {
    const t = task.data?.t;
    if (typeof t === 'number') latencies.push(wallNow() - t);
  },
};

function report() {
  const rss = process.memoryUsage().rss;
  maxRss = Math.max(maxRss, rss);
  process.send?.({
    type: 'stats',
    completed: handle?.stats.completed ?? 0,
    claimed: handle?.stats.claimed ?? 0,
    rss,
    maxRss,
    latencies: latencies.length > 0 ? latencies.splice(0) : undefined,
  });
}
const ticker = setInterval(report, 50);

process.on('message', async (msg) => {
  if (msg.cmd === 'run') {
    latencies = [];
    maxRss = 0;
    handle = runWorker(client, handlers, {
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
    process.send?.({ type: 'running' });
  } else if (msg.cmd === 'stop') {
    await handle?.stop();
    report();
    handle = null;
    process.send?.({ type: 'stopped' });
  } else if (msg.cmd === 'exit') {
    clearInterval(ticker);
    await handle?.stop();
    await client.close();
    process.disconnect?.();
    process.exit(0);
  }
});
process.send?.({ type: 'ready' });
