// `pnpm bench --fleet`: fleets of N workers (N = 16, 64, 256 by default), many workers per
// process, each with its own ZooKeeper session and worker loop (no-op handler, concurrency 4),
// one standalone ZooKeeper per N. Measures the join (time to stable bucket ownership, server
// packets per worker), a queued task in the idle fleet (packets beyond pings), the drain of
// queued tasks (tasks/s, refused claim multis per task) and the re-owning of a stopped
// worker's buckets. Every step has a deadline: a fleet that does not settle in time is
// reported as such (`timedOut`), and the run goes on to the next N.
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../packages/core/dist/index.js';
import { connectZk } from '../packages/zk-adapter/dist/index.js';
import { startZooKeeper } from '../packages/zk-testkit/dist/index.js';
import { joinTimeline, spread, timelineLine } from './fleet-timeline.mjs';
import { pipelined, quiet, wallNow, writeResults } from './tools.mjs';
import { mntr } from './zk-stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CONCURRENCY = 4;
const SESSION_TIMEOUT_MS = 10_000;
/** Ownership unchanged this long (and a partition of every bucket) counts as stable. */
const STABLE_QUIET_MS = 2_000;
/** Tasks queued one at a time into the idle fleet, each its packets counted alone. */
const IDLE_TASKS = 3;
/** How long after a lone task its packets are counted (past the steal delay, 1 s). */
const IDLE_WINDOW_MS = 3_000;

/** A group of fleet processes (bench/fleet-worker.mjs) hosting `n` workers between them. */
class FleetProcs {
  constructor(connectString) {
    this.connectString = connectString;
    this.procs = [];
    this.errors = [];
  }

  async start(n, procs) {
    const per = Math.ceil(n / procs);
    for (let p = 0; p < procs && p * per < n; p++) {
      const count = Math.min(per, n - p * per);
      const child = fork(path.join(here, 'fleet-worker.mjs'), [this.connectString, String(p)], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        execArgv: ['--max-semi-space-size=4'],
      });
      const proc = { child, count, stats: null, waiters: [] };
      child.on('message', (m) => {
        if (m.type === 'stats') {
          proc.stats = m;
          if (m.errors) this.errors.push(...m.errors);
        } else if (m.type === 'failed') this.errors.push(m.error);
        const waiters = proc.waiters;
        proc.waiters = [];
        for (const wake of waiters) wake(m);
      });
      this.procs.push(proc);
    }
    await Promise.all(this.procs.map((p) => this.next(p, 'ready')));
    await this.all({ cmd: 'connect', sessionTimeoutMs: SESSION_TIMEOUT_MS }, 'connected', true);
  }

  next(proc, type) {
    return new Promise((resolve, reject) => {
      const onExit = (code) =>
        reject(new Error(`fleet process exited (${code}) waiting for ${type}`));
      const wait = (m) => {
        if (m.type === 'failed') {
          proc.child.off('exit', onExit);
          return reject(new Error(m.error));
        }
        if (m.type !== type) return proc.waiters.push(wait);
        proc.child.off('exit', onExit);
        resolve(m);
      };
      proc.waiters.push(wait);
      proc.child.once('exit', onExit);
    });
  }

  async all(msg, reply, withCount = false) {
    await Promise.all(
      this.procs.map((p) => {
        const got = this.next(p, reply);
        p.child.send(withCount ? { ...msg, count: p.count } : msg);
        return got;
      }),
    );
  }

  /** Stops worker `i` of process `p` cleanly (it unregisters, its session closes). */
  async stopOne(p, i) {
    const proc = this.procs[p];
    const got = this.next(proc, 'stopped');
    proc.child.send({ cmd: 'stop', which: [i] });
    return (await got).unregisteredAt?.[0] ?? null;
  }

  /**
   * Restarts a quarter of each process's live workers: they stop cleanly (unregistering) and
   * as many new workers, each with a new session, start in their place. How many restarted.
   */
  async restartQuarter() {
    let restarted = 0;
    await Promise.all(
      this.procs.map(async (proc) => {
        const live = (proc.stats?.owners ?? []).filter((o) => o.owned !== null).map((o) => o.i);
        const which = live.slice(0, Math.max(1, Math.floor(live.length / 4)));
        restarted += which.length;
        let got = this.next(proc, 'stopped');
        proc.child.send({ cmd: 'stop', which });
        await got;
        got = this.next(proc, 'connected');
        proc.child.send({
          cmd: 'connect',
          count: which.length,
          sessionTimeoutMs: SESSION_TIMEOUT_MS,
        });
        await got;
        got = this.next(proc, 'running');
        proc.child.send({ cmd: 'run', world: this.world, concurrency: CONCURRENCY });
        await got;
      }),
    );
    return restarted;
  }

  /** Every live worker's registration, registry listings and rewrites since `since`. */
  async timeline(since) {
    const got = await Promise.all(
      this.procs.map((p) => {
        const reply = this.next(p, 'timeline');
        p.child.send({ cmd: 'timeline', since });
        return reply;
      }),
    );
    return got.flatMap((m) => m.members);
  }

  /** Process and index of a live worker that owns buckets now. */
  anOwner() {
    for (const [p, proc] of this.procs.entries())
      for (const o of proc.stats?.owners ?? []) if (o.owned) return [p, o.i];
    return [0, 0];
  }

  /** The processes' requests by client method, summed. */
  calls() {
    const out = {};
    for (const p of this.procs)
      for (const [k, v] of Object.entries(p.stats?.calls ?? {})) out[k] = (out[k] ?? 0) + v;
    return out;
  }

  /** Sum of the processes' latest stats. */
  totals() {
    let completed = 0;
    let claims = 0;
    let refused = 0;
    for (const p of this.procs) {
      completed += p.stats?.completed ?? 0;
      claims += p.stats?.claims ?? 0;
      refused += p.stats?.refused ?? 0;
    }
    return { completed, claims, refused };
  }

  /**
   * Whether the live workers' owned buckets are a partition of `buckets` (each bucket owned
   * by exactly one), and the latest time any of them changed.
   */
  ownership(buckets) {
    const seen = new Uint8Array(buckets);
    let owned = 0;
    let lastChange = 0;
    let lastRegistration = 0;
    let complete = true;
    for (const p of this.procs)
      for (const o of p.stats?.owners ?? []) {
        if (o.owned === null) continue;
        if (o.owned === '') {
          complete = false;
          continue;
        }
        lastChange = Math.max(lastChange, o.changedAt);
        lastRegistration = Math.max(lastRegistration, o.registeredAt ?? 0);
        for (const b of o.owned.split(',')) {
          if (seen[Number(b)]++) complete = false;
          owned++;
        }
      }
    // A worker with no bucket is normal past `buckets` workers: only the partition counts.
    return {
      partition: owned === buckets && seen.every((x) => x === 1),
      complete,
      lastChange,
      lastRegistration,
    };
  }

  async exit() {
    await Promise.all(
      this.procs.map(
        (p) =>
          new Promise((resolve) => {
            p.child.once('exit', resolve);
            p.child.send({ cmd: 'exit' });
            setTimeout(() => {
              p.child.kill('SIGKILL');
              resolve();
            }, 20_000).unref();
          }),
      ),
    );
  }
}

/** The sum of an object's counts. */
function sumOf(counts) {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** Waits until `ok()` holds, failing the fleet's errors; false on the deadline. */
async function until(fleet, ok, deadlineMs) {
  const end = Date.now() + deadlineMs;
  while (!ok()) {
    if (fleet.errors.length > 0) throw new Error(`fleet worker failed: ${fleet.errors[0]}`);
    if (Date.now() > end) return false;
    await sleep(10);
  }
  return true;
}

/**
 * Waits for a stable partition of the buckets among the live workers: each bucket owned by
 * exactly one, and no worker's share changed for STABLE_QUIET_MS. The time of the last change.
 */
async function stableOwnership(fleet, buckets, deadlineMs) {
  let settled = null;
  const ok = await until(
    fleet,
    () => {
      const o = fleet.ownership(buckets);
      if (!o.partition) return false;
      if (wallNow() - o.lastChange < STABLE_QUIET_MS) return false;
      settled = o.lastChange;
      return true;
    },
    deadlineMs,
  );
  return ok ? settled : null;
}

/** The server's received packets (every request and ping). */
async function packets(connectString) {
  return (await mntr(connectString)).zk_packets_received;
}

/** The steps a fleet runs (BENCH_FLEET_STEPS), in this order; the join always runs. */
const STEPS = ['join', 'idle', 'drain', 'reown', 'restart'];

/**
 * Re-own samples: owners stopped one at a time, each timed from its unregistration to a
 * partition again, then stable ownership before the next (one sample is too noisy to compare).
 */
async function reownSamples(fleet, buckets, samples, deadlineMs, log, n) {
  const times = [];
  const fromStop = [];
  for (let k = 0; k < samples; k++) {
    // A worker that owns buckets (past 64 workers many own none, and stopping one moves none).
    const [sp, si] = fleet.anOwner();
    // Timed from its unregistration (the deletion of its registry node, stamped by its
    // process), which is what the others react to; from the stop command too, which adds the
    // stopping worker's own shutdown (its loop and running tasks ending in a busy process).
    const r0 = wallNow();
    const unregisteredAt = await fleet.stopOne(sp, si);
    const reowned = await until(fleet, () => fleet.ownership(buckets).partition, deadlineMs);
    const reownedAt = fleet.ownership(buckets).lastChange;
    times.push(reowned && unregisteredAt !== null ? Math.max(0, reownedAt - unregisteredAt) : null);
    fromStop.push(reowned ? Math.max(0, reownedAt - r0) : null);
    // The next sample starts from a settled fleet.
    if (k + 1 < samples) await stableOwnership(fleet, buckets, deadlineMs);
  }
  log(
    `fleet ${n}: stopped workers' buckets re-owned ${times.map((t) => (t === null ? 'timeout' : Math.round(t))).join(', ')} ms after their unregistration`,
  );
  return { times, fromStop };
}

/** One fleet of `n` workers on a server of its own: join, idle task, drain, re-own. */
async function fleetOf(n, { procs, tasks, log, deadlineMs, steps, reownCount }) {
  const server = await startZooKeeper({ own: true });
  const cs = server.connectString;
  const c = await connectZk(cs, { sessionTimeoutMs: 30_000 });
  const fleet = new FleetProcs(cs);
  const world = 'fleet';
  const out = { n };
  try {
    const engine = createEngine(c, { world, logger: quiet });
    await engine.init();
    const buckets = 64;
    await fleet.start(n, procs);
    // Session pings of the connected, idle sessions: subtracted from the counts below.
    const p0 = await packets(cs);
    const t0 = wallNow();
    await sleep(3_000);
    const pingRate = ((await packets(cs)) - p0 - 1) / ((wallNow() - t0) / 1000);
    out.ping_packets_per_s = Number(pingRate.toFixed(1));

    // Join: every worker loop starts at once.
    const j0 = await packets(cs);
    const joinStart = wallNow();
    const c0 = fleet.calls();
    await fleet.all({ cmd: 'run', world, concurrency: CONCURRENCY }, 'running');
    const settled = await stableOwnership(fleet, buckets, deadlineMs);
    out.join_ms = settled === null ? null : Math.round(settled - joinStart);
    // From the last worker's registration (its create's reply): what the fleet itself takes
    // to settle, apart from how long the processes took to start their loops.
    const lastReg = fleet.ownership(buckets).lastRegistration;
    out.join_after_last_registration_ms =
      settled === null || lastReg === 0 ? null : Math.round(Math.max(0, settled - lastReg));
    out.join_timed_out = settled === null;
    // Where the time after the last registration went, worker by worker.
    out.join_timeline = joinTimeline(await fleet.timeline(joinStart), settled);
    log(timelineLine(n, out.join_timeline));
    // The first look of each worker at every bucket is part of joining: the count goes on
    // until the traffic is back to pings (a quiet second), or the deadline.
    let last = await packets(cs);
    let lastAt = wallNow();
    const quietEnd = Date.now() + deadlineMs;
    for (;;) {
      await sleep(1_000);
      const now = await packets(cs);
      const at = wallNow();
      const rate = (now - last - 1) / ((at - lastAt) / 1000);
      last = now;
      lastAt = at;
      if (rate <= pingRate * 1.5 + 2 || Date.now() > quietEnd) break;
    }
    const joinPackets = last - j0 - pingRate * ((lastAt - joinStart) / 1000);
    out.join_packets = Math.round(joinPackets);
    out.join_packets_per_worker = Number((joinPackets / n).toFixed(1));
    // What the join's requests were, per worker: what still grows with the fleet shows here.
    const c1 = fleet.calls();
    out.join_requests_per_worker_by_method = Object.fromEntries(
      Object.entries(c1).map(([k, v]) => [k, Number(((v - (c0[k] ?? 0)) / n).toFixed(1))]),
    );
    log(
      `fleet ${n}: joined in ${out.join_ms} ms (${out.join_after_last_registration_ms} ms after the last registration), ${out.join_packets_per_worker} packets/worker`,
    );

    if (steps.has('idle')) await idleTasks(fleet, engine, cs, pingRate, out, log, deadlineMs);
    if (steps.has('drain')) await drainStep(fleet, engine, tasks, out, log, deadlineMs);
    if (steps.has('reown')) {
      // One live worker at least is left (and a few workers have few owners to stop).
      const { times, fromStop } = await reownSamples(
        fleet,
        buckets,
        Math.min(reownCount, n - 1),
        deadlineMs,
        log,
        n,
      );
      const median = spread(times).median;
      out.reown_ms = median;
      out.reown_samples_ms = times.map((t) => (t === null ? null : Math.round(t)));
      out.reown_spread_ms = spread(times);
      out.reown_from_stop_ms = spread(fromStop).median;
    }
    if (steps.has('restart'))
      await restartStep(fleet, world, buckets, cs, pingRate, out, log, deadlineMs);
    return out;
  } finally {
    await fleet.exit().catch(() => undefined);
    await c.close().catch(() => undefined);
    await server.stop();
  }
}

/** A lone task queued into the idle fleet: what it costs beyond its owner's claim. */
async function idleTasks(fleet, engine, cs, pingRate, out, log, deadlineMs) {
  const n = out.n;
  const perTask = [];
  const requestsPerTask = [];
  for (let k = 0; k < IDLE_TASKS; k++) {
    const before = fleet.totals().completed;
    const q0 = sumOf(fleet.calls());
    const i0 = await packets(cs);
    const s0 = wallNow();
    await engine.queue({ name: `idle-${k}`, type: 'noop' });
    await until(fleet, () => fleet.totals().completed > before, deadlineMs);
    await sleep(IDLE_WINDOW_MS);
    const got = (await packets(cs)) - i0 - 1 - pingRate * ((wallNow() - s0) / 1000);
    perTask.push(Math.round(got));
    // The workers' own count of their requests: exact, where the packets above estimate
    // the pings they take off (a ping rate measured over 3 s).
    await sleep(100);
    requestsPerTask.push(sumOf(fleet.calls()) - q0);
  }
  out.idle_task_packets = Math.round(perTask.reduce((a, b) => a + b, 0) / perTask.length);
  out.idle_task_requests = Math.round(
    requestsPerTask.reduce((a, b) => a + b, 0) / requestsPerTask.length,
  );
  log(
    `fleet ${n}: a task into the idle fleet: ${perTask.join(', ')} packets, ${requestsPerTask.join(', ')} worker requests`,
  );
}

/** Drain: the world paused while the tasks are queued, then resumed: the timed part. */
async function drainStep(fleet, engine, tasks, out, log, deadlineMs) {
  const n = out.n;
  await engine.pause();
  await pipelined(Math.ceil(tasks / 1000), 4, (chunk) =>
    engine.queueMany(
      Array.from({ length: Math.min(1000, tasks - chunk * 1000) }, (_, i) => ({
        name: `t${chunk * 1000 + i}`,
        type: 'noop',
      })),
    ),
  );
  const base = fleet.totals();
  const d0 = performance.now();
  await engine.resume();
  const drained = await until(
    fleet,
    () => fleet.totals().completed - base.completed >= tasks,
    deadlineMs,
  );
  const seconds = (performance.now() - d0) / 1000;
  const after = fleet.totals();
  const done = after.completed - base.completed;
  out.drain_tasks_per_s = Math.round(done / seconds);
  out.drain_timed_out = !drained;
  out.drain_completed = done;
  out.claim_multis = after.claims - base.claims;
  out.refused_claim_multis = after.refused - base.refused;
  out.claim_conflicts_per_task = Number((out.refused_claim_multis / Math.max(1, done)).toFixed(4));
  log(
    `fleet ${n}: drained ${done} in ${seconds.toFixed(1)} s (${out.drain_tasks_per_s}/s), ${out.refused_claim_multis} refused claim multis`,
  );
}

/** A rolling restart of a quarter of the fleet: stopped cleanly, replaced by new workers. */
async function restartStep(fleet, world, buckets, cs, pingRate, out, log, deadlineMs) {
  const n = out.n;
  fleet.world = world;
  const q0 = await packets(cs);
  const restartStart = wallNow();
  const restarted = await fleet.restartQuarter();
  const restartSettled = await stableOwnership(fleet, buckets, deadlineMs);
  const restartPackets =
    (await packets(cs)) - q0 - 1 - pingRate * ((wallNow() - restartStart) / 1000);
  out.restarted = restarted;
  out.restart_ms = restartSettled === null ? null : Math.round(restartSettled - restartStart);
  out.restart_packets_per_worker = Number((restartPackets / restarted).toFixed(1));
  log(
    `fleet ${n}: ${restarted} workers restarted, ownership stable after ${out.restart_ms} ms, ${out.restart_packets_per_worker} packets per restarted worker`,
  );
}

/** The ratio a / b, or null when either is missing. */
function ratio(a, b) {
  return typeof a === 'number' && typeof b === 'number' && b > 0
    ? Number((a / b).toFixed(3))
    : null;
}

/**
 * Runs the fleet phase: BENCH_FLEET_SIZES (default 16,64,256), BENCH_FLEET_TASKS (default
 * 20,000; 2,000 with --quick), BENCH_FLEET_PROCS processes (default 4), each step bounded by
 * BENCH_FLEET_DEADLINE_S (default 180 s).
 */
export async function runFleet({ log, quick, asJson }) {
  const sizes = (process.env.BENCH_FLEET_SIZES ?? (quick ? '4,16' : '16,64,256'))
    .split(',')
    .map(Number);
  const tasks = Number(process.env.BENCH_FLEET_TASKS ?? (quick ? 2_000 : 20_000));
  const procs = Number(process.env.BENCH_FLEET_PROCS ?? 4);
  const deadlineMs = Number(process.env.BENCH_FLEET_DEADLINE_S ?? 180) * 1000;
  const steps = new Set((process.env.BENCH_FLEET_STEPS ?? STEPS.join(',')).split(','));
  for (const step of steps)
    if (!STEPS.includes(step))
      throw new Error(`BENCH_FLEET_STEPS: ${step} is no step (${STEPS.join(', ')})`);
  const reownCount = Number(process.env.BENCH_FLEET_REOWN_SAMPLES ?? 5);
  if (!Number.isInteger(reownCount) || reownCount < 1)
    throw new Error(
      `BENCH_FLEET_REOWN_SAMPLES: ${process.env.BENCH_FLEET_REOWN_SAMPLES} is no count (1 or more)`,
    );
  const started = Date.now();
  const load = os.loadavg().map((x) => Number(x.toFixed(2)));
  const byN = {};
  for (const n of sizes) {
    log(`fleet: ${n} workers in ${Math.min(procs, n)} processes, ${tasks} tasks`);
    byN[n] = await fleetOf(n, { procs, tasks, log, deadlineMs, steps, reownCount });
  }
  const key = (k) => Object.fromEntries(sizes.map((n) => [n, byN[n][k]]));
  const first = sizes[0];
  const lastN = sizes[sizes.length - 1];
  const doc = {
    keys: {
      fleet_join_ms: key('join_ms'),
      fleet_join_after_last_registration_ms: key('join_after_last_registration_ms'),
      fleet_join_packets_per_worker: key('join_packets_per_worker'),
      fleet_drain_tasks_per_s: key('drain_tasks_per_s'),
      fleet_claim_conflicts_per_task: key('claim_conflicts_per_task'),
      fleet_reown_ms: key('reown_ms'),
      fleet_idle_task_packets: key('idle_task_packets'),
      fleet_idle_task_requests: key('idle_task_requests'),
      fleet_restart_ms: key('restart_ms'),
      fleet_restart_packets_per_worker: key('restart_packets_per_worker'),
    },
    ratios: {
      fleet_drain_256_vs_64: ratio(byN[256]?.drain_tasks_per_s, byN[64]?.drain_tasks_per_s),
      fleet_join_packets_per_worker_256_vs_16: ratio(
        byN[256]?.join_packets_per_worker,
        byN[16]?.join_packets_per_worker,
      ),
      fleet_drain_last_vs_first: ratio(
        byN[lastN]?.drain_tasks_per_s,
        byN[first]?.drain_tasks_per_s,
      ),
    },
    details: byN,
    setup: {
      quick,
      sizes,
      tasks,
      processes: procs,
      concurrency: CONCURRENCY,
      steps: STEPS.filter((step) => steps.has(step)),
      reown_samples: reownCount,
      session_timeout_ms: SESSION_TIMEOUT_MS,
      seconds: Math.round((Date.now() - started) / 1000),
      load_average_at_start: load,
    },
  };
  writeResults('fleet.json', doc);
  if (asJson) console.log(JSON.stringify(doc, null, 2));
  else {
    const rows = sizes.map((n) => {
      const d = byN[n];
      return `${String(n).padStart(5)} | ${String(d.join_ms).padStart(7)} | ${String(d.join_packets_per_worker).padStart(8)} | ${String(d.idle_task_packets).padStart(6)} | ${String(d.drain_tasks_per_s).padStart(7)} | ${String(d.claim_conflicts_per_task).padStart(8)} | ${String(d.reown_ms).padStart(6)} | ${String(d.restart_ms).padStart(7)} | ${String(d.restart_packets_per_worker).padStart(8)}`;
    });
    process.stdout.write(
      `    N | join ms | pkts/wkr | idle/t | drain/s | refused/t | reown | restart | pkts/rst\n${rows.join('\n')}\n` +
        `drain 256/64 ${doc.ratios.fleet_drain_256_vs_64}, join packets per worker 256/16 ${doc.ratios.fleet_join_packets_per_worker_256_vs_16}\n`,
    );
  }
  return doc;
}
