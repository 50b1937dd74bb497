// Bench phase of the AMQP bridge: a soak of mixed messages through two zoott-amqp-bridge
// processes and two zoott-worker processes (the built binaries), against a plain amqplib
// consume-and-ack loop on the same broker, measured in the same run. Imported by
// bench/run.mjs; uses the built packages and programs only.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../packages/core/dist/index.js';
import { startRabbitMq } from '../packages/rabbitmq-testkit/dist/index.js';
import { connectZk } from '../packages/zk-adapter/dist/index.js';
import { startZooKeeper } from '../packages/zk-testkit/dist/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// amqplib is the bridge's dependency, not the repository root's: resolved from there.
const amqp = createRequire(path.join(here, '../packages/amqp-bridge/package.json'))('amqplib');
const BRIDGE_BIN = path.join(here, '../apps/amqp-bridge/dist/bin.js');
const WORKER_BIN = path.join(here, '../apps/worker/dist/bin.js');

/** What the bridge prefetches per queue by default: the plain loop consumes with the same. */
const PREFETCH = 16;
const quiet = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} };

/**
 * The i-th message of the soak, as the soak test mixes them (`apps/amqp-bridge/test/
 * bridge-soak.zk.test.ts`): one in 20 each of a job the engine refuses, a malformed message
 * with an address, one without, a job naming a forbidden exchange, a race; two identical
 * posts; the rest good jobs. `answered`: a result or error result comes back for it.
 */
function message(i) {
  const rk = { exchange: 'soak', routingkey: 'rk-soak' };
  const slot = i % 20;
  const json = (v) => JSON.stringify(v);
  if (slot === 0)
    return {
      queue: 'jobs',
      answered: true,
      body: json({ executable: '/usr/bin/true', server: '', ...rk, i }),
    };
  if (slot === 1) return { queue: 'jobs', answered: true, body: json({ executable: 7, ...rk, i }) };
  if (slot === 2) return { queue: 'jobs', answered: false, body: `not JSON ${i}` };
  if (slot === 3)
    return {
      queue: 'jobs',
      answered: false,
      body: json({ executable: '/usr/bin/true', exchange: 'elsewhere', routingkey: 'rk-soak', i }),
    };
  if (slot === 4)
    return {
      queue: 'races',
      answered: true,
      body: json({ executable: '/usr/bin/cat', input: [{ data: `r${i}\n` }], ...rk, i }),
    };
  if (slot === 5 || slot === 6)
    return {
      queue: 'jobs',
      answered: true,
      body: json({ executable: '/usr/bin/echo', arguments: ['dup'], ...rk }),
    };
  return {
    queue: 'jobs',
    answered: true,
    body: json({ executable: '/usr/bin/echo', arguments: [`job ${i}`], ...rk, i }),
  };
}

/** A program started with its JSON log lines kept; `started` resolves at the line `ready`. */
function program(bin, args, env, ready) {
  const child = spawn(process.execPath, [bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', ...env },
  });
  const lines = [];
  let partial = '';
  let out = '';
  let resolveReady;
  const started = new Promise((resolve, reject) => {
    resolveReady = resolve;
    child.once('exit', (code) =>
      reject(new Error(`${path.basename(bin)} exited ${code}:\n${out}`)),
    );
  });
  child.stdout.on('data', (b) => {
    partial += b.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      try {
        const line = JSON.parse(text);
        lines.push(line);
        if (line.msg === ready) resolveReady();
      } catch {
        out += `${text}\n`;
      }
    }
  });
  child.stderr.on('data', (b) => {
    out += b.toString();
  });
  // Killed at the end of the phase: an exit then is no failure of its start.
  started.catch(() => undefined);
  return { child, lines, started };
}

/** Resident set of a process in MB (from /proc), 0 when it is gone. */
function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Publishes every message of `msgs` to its queue (or `queueOf`), confirmed. */
async function preload(conn, msgs, queueOf = (m) => m.queue) {
  const pub = await conn.createConfirmChannel();
  for (const m of msgs) pub.sendToQueue(queueOf(m), Buffer.from(m.body), { persistent: true });
  await pub.waitForConfirms();
  await pub.close();
}

/** Polls `probe` every 20 ms until it is true, at most `ms`. */
async function until(probe, ms, what) {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`amqp soak: ${what} not within ${ms} ms`);
    await sleep(20);
  }
}

/**
 * The plain loop: the soak's messages preloaded into a queue of their own, then one consumer
 * with the bridge's prefetch acknowledging each as it comes; messages/s from its first
 * delivery to its last ack, and the time from its start to its last ack.
 */
async function plainLoop(conn, msgs, round) {
  const ch = await conn.createChannel();
  const queue = `plain-${round}`;
  await ch.assertQueue(queue, { durable: true });
  await preload(conn, msgs, () => queue);
  await ch.prefetch(PREFETCH);
  let acked = 0;
  let first = 0;
  let last = 0;
  const t0 = performance.now();
  await ch.consume(queue, (m) => {
    if (!m) return;
    if (acked === 0) first = performance.now();
    ch.ack(m);
    acked++;
    last = performance.now();
  });
  await until(async () => acked === msgs.length, 120_000, 'the plain loop');
  await ch.close();
  return { perSecond: acked / ((last - first) / 1000), seconds: (last - t0) / 1000 };
}

/**
 * The bridge soak: `n` mixed messages preloaded, then two bridges and two workers started;
 * messages/s from the bridges' first to last verdict (queued or refused: their log lines),
 * results/s from the first to the last result arriving, and the drain from the bridges'
 * start to the last result or dead letter. The bridges' RSS is sampled throughout.
 */
async function bridgeSoak(conn, connectString, url, msgs) {
  const ch = await conn.createChannel();
  await ch.assertExchange('soak', 'direct', { durable: false });
  await ch.assertExchange('soak-dlx', 'fanout', { durable: false });
  for (const q of ['jobs', 'races']) await ch.assertQueue(q, { durable: true });
  const { queue: rq } = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(rq, 'soak', 'rk-soak');
  const { queue: dq } = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(dq, 'soak-dlx', '');
  const arrivals = [];
  await ch.consume(rq, () => arrivals.push(performance.now()), { noAck: true });
  let dead = 0;
  let lastDead = 0;
  await ch.consume(
    dq,
    () => {
      dead++;
      lastDead = performance.now();
    },
    { noAck: true },
  );
  await preload(conn, msgs);

  const dataDir = mkdtempSync(path.join(tmpdir(), 'zoott-bench-amqp-'));
  const env = { ZOOTT_CONNECT: connectString, ZOOTT_WORLD: 'jobs', ZOOTT_AMQP_URL: url };
  const procs = [];
  try {
    for (let i = 0; i < 2; i++) {
      const w = program(
        WORKER_BIN,
        [
          ...['--allow-exec', '/usr/bin/*', '--run-as', userInfo().username, '--concurrency', '4'],
          ...['--data-dir', dataDir, '--log-level', 'warn'],
        ],
        env,
        'worker started',
      );
      procs.push(w);
    }
    // warn: 'worker started' is info; wait for registration through ZooKeeper instead.
    const c = await connectZk(connectString);
    await until(
      async () => (await c.children('/zoott_workers/jobs').catch(() => [])).length === 2,
      60_000,
      'two workers',
    );
    const t0 = performance.now();
    const bridges = [0, 1].map(() =>
      program(
        BRIDGE_BIN,
        ['--dead-letter-exchange', 'soak-dlx', '--reply-exchanges', 'soak'],
        env,
        'bridge running',
      ),
    );
    procs.push(...bridges);
    const rss = [];
    const sampler = setInterval(() => {
      for (const b of bridges) rss.push(rssMb(b.child.pid));
    }, 200);
    const answered = msgs.filter((m) => m.answered).length;
    const unanswered = msgs.length - answered;
    try {
      await until(
        async () => arrivals.length >= answered && dead >= unanswered,
        600_000,
        'every answer',
      );
    } finally {
      clearInterval(sampler);
    }
    const drainMs = Math.max(arrivals[arrivals.length - 1], lastDead) - t0;
    const verdicts = bridges
      .flatMap((b) => b.lines)
      .filter((l) => l.msg === 'job from AMQP queued' || l.msg === 'message refused')
      .map((l) => l.time);
    const intakeS = (Math.max(...verdicts) - Math.min(...verdicts)) / 1000;
    const resultsS = (arrivals[arrivals.length - 1] - arrivals[0]) / 1000;
    await c.close();
    return {
      messagesPerSecond: verdicts.length / intakeS,
      verdicts: verdicts.length,
      resultsPerSecond: arrivals.length / resultsS,
      results: arrivals.length,
      deadLetters: dead,
      drainSeconds: drainMs / 1000,
      bridgeRssMb: Math.max(...rss),
    };
  } finally {
    for (const p of procs) p.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await ch.close().catch(() => undefined);
  }
}

/**
 * The phase: its own ZooKeeper and RabbitMQ; the plain loop, then the bridge soak, on the
 * same broker. Returns the bench's `results`, `ratios`, `details` and table `rows`.
 */
export async function amqpSoakPhase({ quick, log }) {
  const n = quick ? 400 : 2000;
  const msgs = Array.from({ length: n }, (_, i) => message(i));
  log(`amqp: ZooKeeper and RabbitMQ of its own; ${n} mixed messages`);
  const zk = await startZooKeeper({ own: true });
  const broker = await startRabbitMq({ own: true });
  const c = await connectZk(zk.connectString);
  const conn = await amqp.connect(broker.url);
  conn.on('error', () => undefined);
  try {
    await createEngine(c, { world: 'jobs', logger: quiet }).init();
    // The plain loop is short and noisy on a busy machine: the median of three rounds.
    const rounds = [];
    for (let r = 0; r < 3; r++) rounds.push(await plainLoop(conn, msgs, r));
    const plain = rounds.sort((a, b) => a.perSecond - b.perSecond)[1];
    log(`amqp: plain consume-and-ack ${plain.perSecond.toFixed(0)} msg/s`);
    const soak = await bridgeSoak(conn, zk.connectString, broker.url, msgs);
    log(
      `amqp: bridges ${soak.messagesPerSecond.toFixed(0)} msg/s, results ${soak.resultsPerSecond.toFixed(0)}/s, drained in ${soak.drainSeconds.toFixed(1)} s`,
    );
    const results = {
      amqp_plain_consume_ack_per_s: Math.round(plain.perSecond),
      amqp_bridge_messages_per_s: Math.round(soak.messagesPerSecond),
      amqp_bridge_results_per_s: Math.round(soak.resultsPerSecond),
      amqp_bridge_drain_s: Number(soak.drainSeconds.toFixed(2)),
    };
    return {
      results,
      ratios: {
        amqp_messages_vs_plain: Number((soak.messagesPerSecond / plain.perSecond).toFixed(3)),
        amqp_results_vs_plain: Number((soak.resultsPerSecond / plain.perSecond).toFixed(3)),
        amqp_drain_vs_plain: Number((soak.drainSeconds / plain.seconds).toFixed(3)),
      },
      details: {
        amqp_messages: n,
        amqp_bridges: 2,
        amqp_workers: 2,
        amqp_worker_concurrency: 4,
        amqp_prefetch: PREFETCH,
        amqp_verdicts: soak.verdicts,
        amqp_results: soak.results,
        amqp_dead_letters: soak.deadLetters,
        amqp_plain_drain_s: Number(plain.seconds.toFixed(3)),
        amqp_plain_rounds_per_s: rounds.map((r) => Math.round(r.perSecond)).sort((a, b) => a - b),
        amqp_bridge_rss_mb: Number(soak.bridgeRssMb.toFixed(1)),
      },
      rows: [
        ['AMQP plain consume-and-ack msg/s', results.amqp_plain_consume_ack_per_s],
        [`AMQP bridge msg/s (${n} mixed, 2 bridges)`, results.amqp_bridge_messages_per_s],
        ['AMQP results/s (2 workers x 4)', results.amqp_bridge_results_per_s],
        ['AMQP drain s', results.amqp_bridge_drain_s],
      ],
    };
  } finally {
    await conn.close().catch(() => undefined);
    await c.close().catch(() => undefined);
    // The testkit waits for the broker's VM on handles it does not keep the process alive
    // with (a test run has others): hold it open until both servers are down.
    const alive = setInterval(() => undefined, 1000);
    try {
      await broker.stop();
      await zk.stop();
    } finally {
      clearInterval(alive);
    }
  }
}
