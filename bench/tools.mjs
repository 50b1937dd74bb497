// Helpers the bench phases share (bench/run.mjs and bench/scheduling.mjs).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../packages/core/dist/index.js';
import { fourLetter } from '../packages/zk-testkit/dist/index.js';
import { busyShare, machineCpu, mntr, processCpuUs } from './zk-stats.mjs';

/**
 * Writes a results document as `name` into bench/results, or into BENCH_RESULTS_DIR (a run
 * that must not replace the committed results: the bench's own tests). A `--quick` run's
 * numbers mean nothing: it writes only where BENCH_RESULTS_DIR says.
 */
export function writeResults(name, doc) {
  const given = process.env.BENCH_RESULTS_DIR;
  if (doc.setup?.quick && given === undefined) return;
  const dir = given ?? path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), `${JSON.stringify(doc, null, 2)}\n`);
}

export const quiet = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} };
/** Wall-clock ms with sub-ms precision, comparable across processes on one machine. */
export const wallNow = () => performance.timeOrigin + performance.now();
export const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

/** Runs `fn(i)` for i in [0, n) with at most `width` calls in flight. */
export async function pipelined(n, width, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** p50 and p99 of `values` (ms), rounded to 0.01; nulls when there are none. */
export function spread(values) {
  if (values.length === 0) return { p50: null, p99: null };
  const sorted = values.slice().sort((a, b) => a - b);
  const at = (p) => Number(percentile(sorted, p).toFixed(2));
  return { p50: at(50), p99: at(99) };
}

/**
 * From now on, what bounds a latency phase (bench/README.md, "What bounds the latency keys"):
 * `busy()` the machine's busy share since, `loneWrite()` the p50/p99 of the workers' lone
 * writes reported since, and `serverWrite()` the server's own p50/p99 of the writes it served
 * since (`mntr`'s update latency, from a request's arrival to its commit: fsync and the
 * queue in front of it included, the network not). `srst` resets the server's statistics,
 * so the server's figures cover this window only.
 */
export function floorWindow(fleet) {
  fleet.loneWrites.length = 0;
  const cpu0 = machineCpu();
  const server = fleet.connectString.replace(/\/.*$/, '');
  const reset = fourLetter(server, 'srst');
  return {
    busy: () => busyShare(cpu0, machineCpu()),
    loneWrite: () => spread(fleet.loneWrites),
    serverWrite: async () => {
      await reset;
      const m = await mntr(server);
      return { p50: m.zk_p50_updatelatency ?? null, p99: m.zk_p99_updatelatency ?? null };
    },
  };
}

/**
 * The CPU time (µs) spent so far by the workers (all together), the server and this process
 * (the producer); `since(earlier, n)` gives each one's share per task over `n` tasks. At a
 * paced rate this is what a task costs the machine, as opposed to the drain's amortised cost.
 */
export async function windowCpu(fleet, zkPid) {
  const workers = (await fleet.cpuUs()).reduce((sum, us) => sum + us, 0);
  const server = await processCpuUs(zkPid);
  const { user, system } = process.cpuUsage();
  const producer = user + system;
  return {
    workers,
    server,
    producer,
    since: (from, n) => ({
      workersUsPerTask: Math.round((workers - from.workers) / n),
      serverUsPerTask:
        server === null || from.server === null ? null : Math.round((server - from.server) / n),
      producerUsPerTask: Math.round((producer - from.producer) / n),
    }),
  };
}

/** Waits until the workers report `n` completions; progress on stderr every 5 s. */
export async function waitCompleted(fleet, n, label, timeoutMs = 600_000) {
  const start = Date.now();
  let shown = start;
  while (fleet.completed() < n) {
    if (fleet.errors.length > 0) throw new Error(`worker failed: ${fleet.errors[0]}`);
    if (Date.now() - start > timeoutMs)
      throw new Error(`${label}: ${fleet.completed()}/${n} after ${timeoutMs} ms`);
    if (Date.now() - shown >= 5000) {
      shown = Date.now();
      log(`${label}: ${fleet.completed()}/${n} done`);
    }
    await sleep(2);
  }
}

/** The engine's own counts must agree with the workers: every task completed, none lost. */
export async function confirm(engine, total, label) {
  const counts = await engine.counts();
  if (
    counts.completed !== total ||
    counts.pending !== 0 ||
    counts.working !== 0 ||
    counts.failed !== 0
  )
    throw new Error(`${label}: counts ${JSON.stringify(counts)}, expected ${total} completed`);
}

export async function newWorld(c, world) {
  const engine = createEngine(c, { world, logger: quiet });
  await engine.init();
  return engine;
}
