// `pnpm bench --peers` (or `node bench/run.mjs --peers [--json] [--quick]`): zoott's drain and
// the BullMQ yardstick's, in one sitting, taking turns (zoott, then BullMQ, each round). The
// yardstick is the peer benchmark kept beside the repository (`peers/bullmq`, found in the
// nearest parent directory that holds `shared/peers/bullmq`, or BENCH_BULLMQ_DIR): BullMQ 5
// on a private redis-server (AOF every second), 4 worker processes of concurrency 128, as
// zoott's drain runs. It is copied to a scratch directory and its npm packages installed
// there once. Without redis-server the BullMQ side is skipped, with a line that says so.
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../packages/zk-testkit/dist/index.js';
import { writeResults } from './tools.mjs';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const PEER_FILES = ['bench.mjs', 'worker.mjs', 'package.json', 'package-lock.json'];

/** The peer's directory: BENCH_BULLMQ_DIR, else `shared/peers/bullmq` in a parent directory. */
function peerDir() {
  const given = process.env.BENCH_BULLMQ_DIR;
  if (given) {
    if (!existsSync(path.join(given, 'bench.mjs')))
      throw new Error(`BENCH_BULLMQ_DIR=${given}: no bench.mjs there (the BullMQ yardstick)`);
    return given;
  }
  for (let dir = path.resolve(here, '..'); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared', 'peers', 'bullmq');
    if (existsSync(path.join(candidate, 'bench.mjs'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

async function onPath(cmd) {
  try {
    await run('sh', ['-c', `command -v ${cmd}`]);
    return true;
  } catch {
    return false;
  }
}

/** Why the BullMQ side cannot run here (null: it can). */
async function skipReason(dir) {
  if (!(await onPath('redis-server'))) return 'redis-server is not installed';
  if (dir === null) return 'no peers/bullmq directory (set BENCH_BULLMQ_DIR)';
  return null;
}

/** A writable copy of the peer with its npm packages (installed once per scratch directory). */
async function preparePeer(dir, log) {
  const work = path.join(os.tmpdir(), 'zoott-bench-peers', 'bullmq');
  mkdirSync(work, { recursive: true });
  for (const f of PEER_FILES) copyFileSync(path.join(dir, f), path.join(work, f));
  if (!existsSync(path.join(work, 'node_modules', 'bullmq'))) {
    log('peers: installing the BullMQ yardstick (npm ci, once)');
    await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: work, timeout: 300_000 });
  }
  return work;
}

/** A private redis-server as the yardstick asks for it (AOF, fsync every second). */
async function startRedis() {
  const port = await freePort();
  const dir = path.join(os.tmpdir(), 'zoott-bench-peers', `redis-${port}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const { stdout } = await run('redis-cli', ['-p', String(port), 'ping']);
      if (stdout.trim() === 'PONG') break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error('redis-server did not answer PING in 20 s');
    await sleep(100);
  }
  return {
    port,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One BullMQ drain of `tasks` jobs: its rate and the CPU each job cost workers and Redis. */
async function bullmqDrain(work, port, tasks, workers, concurrency) {
  const { stdout } = await run(
    process.execPath,
    [
      'bench.mjs',
      String(port),
      String(tasks),
      String(workers),
      String(concurrency),
      '--phases=drain',
    ],
    { cwd: work, timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const lines = stdout.trim().split('\n');
  const doc = JSON.parse(lines[lines.length - 1]);
  const d = doc.phases.find((p) => p.phase === 'drain');
  if (!d || d.completed !== tasks)
    throw new Error(`BullMQ drain: ${d?.completed ?? 0} of ${tasks} jobs completed`);
  const perJobUs = (pct) => Math.round(((pct / 100) * d.drainProbe.wallS * 1e6) / tasks);
  return {
    perSecond: d.drainPerS,
    workerCpuUsPerTask: perJobUs(d.drainProbe.workersCpuPct),
    redisCpuUsPerTask: perJobUs(d.drainProbe.redisCpuPct),
    versions: { bullmq: doc.bullmq, redis: doc.redis, aof: doc.redisAppendfsync },
  };
}

const median = (xs) => {
  const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
  return s.length === 0 ? null : s[Math.floor((s.length - 1) / 2)];
};

/**
 * Runs `rounds` rounds of zoott's drain (`zoottDrain()`, warm-up included) then BullMQ's, and
 * prints and writes (`results/peers.json`) the medians and every round.
 */
export async function runPeers({ zoottDrain, tasks, workers, concurrency, quick, asJson, log }) {
  const rounds = Number(process.env.BENCH_PEER_ROUNDS ?? (quick ? 1 : 3));
  const dir = peerDir();
  const skipped = await skipReason(dir);
  if (skipped) log(`peers: BullMQ skipped: ${skipped}`);
  const work = skipped ? null : await preparePeer(dir, log);
  const redis = skipped ? null : await startRedis();
  const turns = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const z = await zoottDrain();
      log(
        `peers round ${r + 1}: zoott ${Math.round(z.perSecond)} tasks/s (workers ${z.workerCpuUsPerTask} µs, server ${z.zkCpuUsPerTask} µs per task)`,
      );
      const b = redis ? await bullmqDrain(work, redis.port, tasks, workers, concurrency) : null;
      if (b)
        log(
          `peers round ${r + 1}: BullMQ ${b.perSecond} jobs/s (workers ${b.workerCpuUsPerTask} µs, Redis ${b.redisCpuUsPerTask} µs per job)`,
        );
      turns.push({ zoott: z, bullmq: b });
    }
  } finally {
    await redis?.stop();
  }
  const zRate = median(turns.map((t) => t.zoott.perSecond));
  const bRate = median(turns.map((t) => t.bullmq?.perSecond ?? null));
  const results = {
    drain_tasks_per_s: Math.round(zRate),
    bullmq_drain_jobs_per_s: bRate,
    drain_worker_cpu_us_per_task: median(turns.map((t) => t.zoott.workerCpuUsPerTask)),
    drain_zk_cpu_us_per_task: median(turns.map((t) => t.zoott.zkCpuUsPerTask)),
    bullmq_worker_cpu_us_per_job: median(turns.map((t) => t.bullmq?.workerCpuUsPerTask ?? null)),
    bullmq_redis_cpu_us_per_job: median(turns.map((t) => t.bullmq?.redisCpuUsPerTask ?? null)),
  };
  const doc = {
    ...results,
    ratios: { drain_vs_bullmq: bRate ? Number((zRate / bRate).toFixed(3)) : null },
    details: {
      bullmq_skipped: skipped,
      rounds: turns.map((t) => ({
        zoott_tasks_per_s: Math.round(t.zoott.perSecond),
        bullmq_jobs_per_s: t.bullmq?.perSecond ?? null,
        drain_vs_bullmq: t.bullmq
          ? Number((t.zoott.perSecond / t.bullmq.perSecond).toFixed(3))
          : null,
      })),
      bullmq: turns.find((t) => t.bullmq)?.bullmq.versions ?? null,
    },
    setup: {
      tasks,
      workers,
      concurrency,
      rounds,
      quick,
      cpus: os.cpus().length,
      load_average_at_start: os.loadavg().map((l) => Number(l.toFixed(2))),
      node: process.version,
      at: new Date().toISOString(),
    },
  };
  writeResults('peers.json', doc);
  if (asJson) {
    process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    return;
  }
  const show = (v) => (v === null ? '-' : String(v));
  const rows = [
    ['zoott drain tasks/s', results.drain_tasks_per_s],
    ['BullMQ drain jobs/s', show(results.bullmq_drain_jobs_per_s)],
    ['drain_vs_bullmq', skipped ? `skipped: ${skipped}` : show(doc.ratios.drain_vs_bullmq)],
    [
      'zoott CPU µs per task: workers / ZooKeeper',
      `${show(results.drain_worker_cpu_us_per_task)} / ${show(results.drain_zk_cpu_us_per_task)}`,
    ],
    [
      'BullMQ CPU µs per job: workers / Redis',
      `${show(results.bullmq_worker_cpu_us_per_job)} / ${show(results.bullmq_redis_cpu_us_per_job)}`,
    ],
  ];
  const out = ['', `peers (${rounds} round(s), medians)`, '-'.repeat(60)];
  for (const [k, v] of rows) out.push(`${k.padEnd(44)} ${String(v).padStart(14)}`);
  process.stdout.write(`${out.join('\n')}\n`);
}
