// The recovery phase of the bench (bench/run.mjs): how soon work resumes after a ZooKeeper
// outage longer than the worker's session. A ZooKeeper of its own and one zoott-worker daemon
// (the built binary, 4 s session, concurrency 1) with a task running and one waiting; the
// server is stopped until the worker has called its session lost, then started again.
// Measured from the restart: the first claim (the waiting task's record startedAt), the first
// completion of the task that was running (its record completedAt), and the floor: a bare
// client's reconnect, a raw ZooKeeper handshake started every 20 ms from the same moment.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../packages/core/dist/index.js';
import { connectZk } from '../packages/zk-adapter/dist/index.js';
import { startZooKeeper } from '../packages/zk-testkit/dist/index.js';
import { quiet } from './tools.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKER_BIN = path.join(here, '../apps/worker/dist/bin.js');
const SESSION_MS = 4000;
/** How long the server stays down after the worker called its session lost. */
const AFTER_LOST_MS = 1000;
const FLOOR_TRY_MS = 20;
const PROBE_EVERY_MS = 100;

export const RECOVERY_TARGET = 2;

/** One raw handshake for a new session: resolves true when the server granted one. */
function handshake(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const req = Buffer.alloc(4 + 4 + 8 + 4 + 8 + 4 + 16);
    let o = req.writeInt32BE(req.length - 4, 0);
    o = req.writeInt32BE(0, o); // protocol version
    o = req.writeBigInt64BE(0n, o); // last zxid seen
    o = req.writeInt32BE(SESSION_MS, o);
    o = req.writeBigInt64BE(0n, o); // no session yet
    req.writeInt32BE(16, o); // password length; 16 zero bytes follow
    let got = Buffer.alloc(0);
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('connect', () => socket.write(req));
    socket.on('data', (chunk) => {
      got = Buffer.concat([got, chunk]);
      // size, protocol version, negotiated timeout: a timeout > 0 is a session.
      if (got.length < 12) return;
      const granted = got.readInt32BE(8) > 0;
      if (granted) {
        const close = Buffer.alloc(12);
        close.writeInt32BE(8, 0);
        close.writeInt32BE(1, 4); // xid
        close.writeInt32BE(-11, 8); // closeSession: leave nothing behind
        socket.write(close);
      }
      done(granted);
    });
    socket.on('error', () => done(false));
  });
}

/**
 * Starts a handshake every FLOOR_TRY_MS, each without waiting for the ones before (a starting
 * server may accept a connection and answer it only once it has loaded its data), until one
 * is granted; resolves with that moment: when the server takes sessions again.
 */
function bareReconnect(hostPort) {
  const [host, port] = hostPort.split(':');
  return new Promise((resolve) => {
    let granted = false;
    const timer = setInterval(() => {
      void handshake(host, Number(port)).then((ok) => {
        if (!ok || granted) return;
        granted = true;
        clearInterval(timer);
        resolve(Date.now());
      });
    }, FLOOR_TRY_MS);
  });
}

/** The daemon binary, its JSON log lines collected, its metrics URL once it says it. */
function startWorker(connect) {
  const child = spawn(
    process.execPath,
    [
      WORKER_BIN,
      '--connect',
      connect,
      '--create-world',
      '--world',
      'recovery',
      '--handlers',
      path.join(here, 'recovery-handlers.mjs'),
      '--session-timeout',
      String(SESSION_MS),
      '--concurrency',
      '1',
      '--metrics-port',
      '0',
    ],
    {
      cwd: here,
      // No user configuration file reaches the bench's worker.
      env: { ...process.env, XDG_CONFIG_HOME: path.join(here, 'no-config-home') },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = [];
  let rest = '';
  child.stdout.on('data', (chunk) => {
    const parts = (rest + chunk.toString()).split('\n');
    rest = parts.pop();
    for (const p of parts) {
      try {
        lines.push(JSON.parse(p));
      } catch {
        // not a log line
      }
    }
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, lines, exited };
}

/** Both endpoints at once: /healthz's status and state, and how long /metrics took. */
async function probe(base) {
  const t0 = Date.now();
  const [health, metricsMs] = await Promise.all([
    fetch(`${base}/healthz`, { signal: AbortSignal.timeout(30_000) })
      .then(async (r) => ({ status: r.status, body: await r.json() }))
      .catch(() => ({ status: 0, body: {} })),
    fetch(`${base}/metrics`, { signal: AbortSignal.timeout(30_000) })
      .then((r) => r.text())
      .then(
        () => Date.now() - t0,
        () => null,
      ),
  ]);
  return { at: t0, status: health.status, state: health.body.state ?? null, metricsMs };
}

async function until(check, what, ms = 120_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`recovery: ${what} not within ${ms} ms`);
    await sleep(50);
  }
}

/**
 * Runs the phase; returns the result keys, the checks (`[name, value, goal, ok]`), details
 * (the timeline of the run) and table rows, as run.mjs adds them to its own.
 */
export async function recoveryPhase({ log }) {
  const server = await startZooKeeper({ own: true });
  const hostPort = server.connectString;
  // Outlives the outage: the producer keeps its session and reads the records after.
  const c = await connectZk(hostPort, { sessionTimeoutMs: 30_000 });
  const engine = createEngine(c, { world: 'recovery', logger: quiet });
  await engine.init();
  const worker = startWorker(hostPort);
  const probes = [];
  let probing = true;
  try {
    const started = await until(
      () => worker.lines.find((l) => l.msg === 'worker started'),
      'the worker starting',
    );
    const base = started.metrics.replace(/\/metrics$/, '');
    await until(async () => (await probe(base)).status === 200, 'the worker serving');
    await engine.queue({ name: 'running', type: 'slow' });
    await until(async () => (await engine.task(['running']))?.state === 'working', 'running');
    await engine.queue({ name: 'waiting', type: 'quick' });
    const sampler = (async () => {
      while (probing) {
        probes.push(await probe(base));
        await sleep(PROBE_EVERY_MS);
      }
    })();

    log(`recovery: stopping the server (worker session ${SESSION_MS} ms)`);
    const stopAt = Date.now();
    await server.stop();
    await until(
      () => worker.lines.find((l) => l.msg === 'session lost' && l.time >= stopAt),
      'the worker calling its session lost',
    );
    await sleep(AFTER_LOST_MS);
    const restartAt = Date.now();
    const floor = bareReconnect(hostPort);
    await server.start();
    const readyAt = Date.now();
    const floorAt = await floor;
    const done = await until(async () => {
      const [r, w] = await Promise.all([engine.task(['running']), engine.task(['waiting'])]);
      return r?.state === 'completed' && w?.state === 'completed' ? { r, w } : null;
    }, 'both tasks completed');
    await until(() => probes.at(-1)?.status === 200, 'the worker serving again');
    probing = false;
    await sampler;

    const claimAt = done.w.startedAt;
    const completionAt = done.r.completedAt;
    const at = (t) => (t === undefined || t === null ? null : t - restartAt);
    const logAt = (msg) => worker.lines.find((l) => l.msg === msg && l.time >= stopAt)?.time;
    const outage = probes.filter((p) => p.at >= stopAt);
    const states = [];
    for (const p of outage) {
      const label = `${p.status} ${p.state}`;
      if (states.at(-1)?.[0] !== label) states.push([label, p.at - restartAt]);
    }
    const metricsMs = outage.map((p) => p.metricsMs ?? Number.POSITIVE_INFINITY);
    const floorMs = floorAt - restartAt;
    const claimMs = claimAt - restartAt;
    const completionMs = completionAt - restartAt;
    log(
      `recovery: floor ${floorMs} ms, first claim ${claimMs} ms, running task completed ${completionMs} ms (from the restart)`,
    );
    const results = {
      recovery_ms: completionMs,
      recovery_claim_ms: claimMs,
      recovery_floor_ms: floorMs,
    };
    const ratios = {
      recovery_vs_floor: completionMs / floorMs,
      recovery_claim_vs_floor: claimMs / floorMs,
    };
    return {
      results,
      ratios: {
        recovery_vs_floor: Number(ratios.recovery_vs_floor.toFixed(3)),
        recovery_claim_vs_floor: Number(ratios.recovery_claim_vs_floor.toFixed(3)),
      },
      checks: [
        [
          'recovery: completion / floor',
          ratios.recovery_vs_floor,
          `<= ${RECOVERY_TARGET}`,
          ratios.recovery_vs_floor <= RECOVERY_TARGET,
        ],
        [
          'recovery: first claim / floor',
          ratios.recovery_claim_vs_floor,
          `<= ${RECOVERY_TARGET}`,
          ratios.recovery_claim_vs_floor <= RECOVERY_TARGET,
        ],
      ],
      details: {
        // Every time in ms from the restart (negative: before it).
        recovery_timeline_ms: {
          server_stopped: at(stopAt),
          session_lost: at(logAt('session lost')),
          server_restarted: 0,
          server_ready: at(readyAt),
          floor_session: at(floorAt),
          session_renewed: at(logAt('session connected')),
          first_claim: at(claimAt),
          first_completion: at(completionAt),
        },
        recovery_after_floor_ms: {
          first_claim: claimMs - floorMs,
          first_completion: completionMs - floorMs,
        },
        recovery_healthz: states,
        recovery_metrics_max_ms: Math.max(...metricsMs),
        recovery_probes: outage.length,
        recovery_session_timeout_ms: SESSION_MS,
      },
      rows: [
        ['recovery: running task completed (ms)', completionMs],
        ['recovery: first claim (ms)', claimMs],
        ['  floor: bare client reconnect (ms)', floorMs],
      ],
    };
  } finally {
    probing = false;
    worker.child.kill('SIGTERM');
    await Promise.race([worker.exited, sleep(20_000)]);
    if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    engine.close();
    await c.close().catch(() => undefined);
    await server.stop();
  }
}
