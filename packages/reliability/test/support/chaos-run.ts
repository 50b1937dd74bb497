/**
 * One chaos run: a 3-server ZooKeeper ensemble, real `zoott-worker` daemon processes with the
 * chaos handlers, a producer that queues trees of depth 3, and a fault schedule (SIGKILLed
 * workers, a stopped leader, a stopped follower, a worker partitioned past its session
 * timeout while its job runs; on a namespace network also the ensemble split 2/1). Returns
 * the history the checker judges.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type Coordinator, createEngine } from '@zoott/core';
import { decodeJson, KEY_SEPARATOR } from '@zoott/core/internal';
import { connectZk } from '@zoott/zk-adapter';
import { makeZkTestCertificates, serverTls } from '@zoott/zk-testkit';
import type { ChaosHistory, CompletedEntry, ExecEvent, Fault } from './chaos-check.js';
import { type Heal, healsOf, readinessOf } from './chaos-heals.js';
import { type ChaosNetwork, type ChaosNetworkKind, startChaosNetwork } from './chaos-network.js';

export interface ChaosOptions {
  /** Tasks to queue (rounded up to whole trees of 1 + 4 + 16). */
  tasks: number;
  /** Mean handler run time. */
  taskMs: number;
  workers: number;
  concurrency: number;
  sessionTimeoutMs: number;
  /** Mean time between two worker SIGKILLs. */
  killEveryMs: number;
  /** `once`: each ensemble/partition fault once; `repeat`: cycle them until the work is done. */
  cycles: 'once' | 'repeat';
  /** Give up waiting for the work after this long. */
  deadlineMs: number;
  /**
   * How the cut-off worker is cut off (`proxy`, the default: TCP proxies go silent; `netns`:
   * its network namespace's link goes down), and with `netns` the ensemble is split 2/1 too.
   */
  network?: ChaosNetworkKind;
  progress?: (line: string) => void;
  /**
   * Every client over TLS to the members' secureClientPort (the producer, and the workers by
   * their ZOOTT_ZK_TLS_CA), the partitioned worker's proxies passing TLS through sealed.
   */
  tls?: boolean;
}

export interface ChaosRun {
  history: Omit<ChaosHistory, 'marginMs'>;
  durationMs: number;
  /** When the last task completed (epoch ms): every fault kind must have started before. */
  workDoneAt: number;
  /** Per partition: when the partitioned worker was back after the heal, and what it did then. */
  heals: Heal[];
  /**
   * Workers that exited on their own (not SIGKILLed by the run, not stopped at its end). A
   * worker restarted into the partition cannot reach ZooKeeper and exits 3 (UNREACHABLE)
   * after its connect timeout (the session timeout, 4 s, shorter than the partition): the
   * run restarts it as a service manager would. Any other exit is a failure of the worker.
   */
  unexpectedExits: Array<{
    slot: number;
    pid: number;
    code: number | null;
    signal: string | null;
    at: number;
  }>;
}

/** `zoott-worker`'s exit code when ZooKeeper cannot be reached (apps/worker/src/bin-errors.ts, the program's exit codes). */
export const WORKER_EXIT_UNREACHABLE = 3;
/** Wait before restarting a worker that exited UNREACHABLE (a service manager's RestartSec). */
const RESTART_AFTER_MS = 1000;
/** How long a partition waits for the cut-off worker to be running a job before it cuts. */
const BUSY_WAIT_MS = 20_000;
/**
 * How long the run waits, once the work is done, for the partitioned worker to be back after
 * the last heal: a failure detector for a worker that never renews (sized for a loaded
 * 2-core machine), not a speed claim.
 */
const BACK_DEADLINE_MS = 120_000;

const WORLD = 'chaos';
const CHROOT = '/chaos';
const BUCKETS = 16;
const CHILDREN = 4;
export const WORKER_BIN = fileURLToPath(
  new URL('../../../../apps/worker/dist/bin.js', import.meta.url),
);
const HANDLERS = fileURLToPath(new URL('./chaos-handlers.mjs', import.meta.url));

/** Keys of whole trees root|child|grandchild, at least `tasks` of them, parents first. */
export function chaosTrees(tasks: number): string[][][] {
  const perTree = 1 + CHILDREN + CHILDREN * CHILDREN;
  const trees: string[][][] = [];
  for (let r = 0; r < Math.ceil(tasks / perTree); r++) {
    const root = `r${r}`;
    const tree: string[][] = [[root]];
    for (let c = 0; c < CHILDREN; c++) {
      tree.push([root, `c${c}`]);
      for (let g = 0; g < CHILDREN; g++) tree.push([root, `c${c}`, `g${g}`]);
    }
    trees.push(tree);
  }
  return trees;
}

interface Slot {
  index: number;
  proc: ChildProcess | null;
  exited: Promise<void>;
  generation: number;
  connect: string;
  /** Set while the run SIGKILLs this slot's process: its exit is expected. */
  killing: boolean;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosRun> {
  const say = o.progress ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'zoott-chaos-'));
  const eventLog = join(dir, 'events.jsonl');
  writeFileSync(eventLog, '');
  if (!existsSync(WORKER_BIN))
    throw new Error(
      `${WORKER_BIN} is missing: run \`pnpm build\` first (the chaos run uses the real daemon)`,
    );

  const certs = o.tls ? makeZkTestCertificates(join(dir, 'certs')) : null;
  const network: ChaosNetwork = await startChaosNetwork(
    o.network ?? 'proxy',
    certs ? serverTls(certs) : undefined,
  );
  const { ensemble } = network;
  const clientTls = certs ? { tls: { ca: readFileSync(certs.ca) } } : {};
  const workerEnv: Record<string, string> = certs ? { ZOOTT_ZK_TLS_CA: certs.ca } : {};
  const pids: number[] = [];
  const slots: Slot[] = [];
  const faults: Fault[] = [];
  const unexpectedExits: ChaosRun['unexpectedExits'] = [];
  /** Set once the run stops the workers itself: their exits are expected. */
  let stoppingWorkers = false;
  let producer: Coordinator | null = null;
  let done = false;
  try {
    const admin = await connectZk(network.connect, clientTls);
    await admin.create(CHROOT).catch(() => undefined);
    await admin.close();
    producer = await connectZk(`${network.connect}${CHROOT}`, {
      sessionTimeoutMs: 20_000,
      ...clientTls,
    });
    const engine = createEngine(producer, { world: WORLD, buckets: BUCKETS, logger: quiet });
    await engine.init();

    // The last worker is the one the network can cut off (chaos-network.ts).
    const proxied = o.workers - 1;
    const proxiedPids = new Set<number>();
    const spawnWorker = (slot: Slot) => {
      slot.generation++;
      const out = openSync(join(dir, `worker-${slot.index}.log`), 'a');
      // `ip netns exec` replaces itself with node: the process's pid is the worker's.
      const [command, ...prefix] = [
        ...(slot.index === proxied ? network.cutOffLauncher : []),
        process.execPath,
      ];
      const proc = spawn(
        command!,
        [
          ...prefix,
          WORKER_BIN,
          ...['--connect', slot.connect, '--world', WORLD, '--handlers', HANDLERS],
          ...['--types', 'chaos', '--concurrency', String(o.concurrency)],
          ...['--session-timeout', String(o.sessionTimeoutMs), '--grace', '3000'],
          ...['--node-id', `chaos-${slot.index}-${slot.generation}`, '--log-level', 'info'],
        ],
        {
          env: {
            ...process.env,
            ...workerEnv,
            ZOOTT_CHAOS_LOG: eventLog,
            ZOOTT_CHAOS_TASK_MS: String(o.taskMs),
          },
          stdio: ['ignore', out, out],
        },
      );
      slot.proc = proc;
      if (proc.pid !== undefined) {
        pids.push(proc.pid);
        if (slot.index === proxied) proxiedPids.add(proc.pid);
      }
      slot.exited = new Promise((resolve) =>
        proc.once('exit', (code, signal) => {
          resolve();
          if (slot.killing || stoppingWorkers || slot.proc !== proc) return;
          unexpectedExits.push({
            slot: slot.index,
            pid: proc.pid ?? -1,
            code,
            signal,
            at: Date.now(),
          });
          say(
            `worker ${slot.index} (pid ${proc.pid}) exited on its own: code ${code}, signal ${signal}`,
          );
          // A worker that could not reach ZooKeeper is restarted, as by a service manager
          // (unless the killer replaced it meanwhile, or the run is stopping its workers):
          // after the work is done too, since the run waits for the partitioned one to be back.
          if (code === WORKER_EXIT_UNREACHABLE)
            setTimeout(() => {
              if (!stoppingWorkers && slot.proc === proc) spawnWorker(slot);
            }, RESTART_AFTER_MS);
        }),
      );
    };
    for (let i = 0; i < o.workers; i++) {
      const connect =
        i === proxied ? `${network.cutOffConnect}${CHROOT}` : `${network.connect}${CHROOT}`;
      const slot: Slot = {
        index: i,
        proc: null,
        exited: Promise.resolve(),
        generation: 0,
        connect,
        killing: false,
      };
      slots.push(slot);
      spawnWorker(slot);
    }

    // Queue every tree: the root, then its children, then the grandchildren. No fault runs
    // while queueing: a queue multi cut by a fault has an unknown outcome.
    const started = Date.now();
    const trees = chaosTrees(o.tasks);
    const queued: string[] = [];
    let next = 0;
    const queueTrees = async () => {
      while (next < trees.length) {
        const tree = trees[next++]!;
        for (const depth of [1, 2, 3]) {
          const level = tree.filter((k) => k.length === depth);
          await Promise.all(
            level.map((key) =>
              engine.queue(
                { name: key[key.length - 1]!, type: 'chaos', data: { depth } },
                depth === 1 ? null : { key: key.slice(0, -1) },
                null,
                { maxAttempts: 100 },
              ),
            ),
          );
          for (const k of level) queued.push(k.join(KEY_SEPARATOR));
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, queueTrees));
    say(`queued ${queued.length} tasks in ${Date.now() - started} ms`);

    let completed = 0;
    const partitioned = { on: false };

    const killer = async () => {
      while (!done) {
        await sleep(o.killEveryMs * (0.5 + Math.random()));
        if (done) break;
        const candidates = slots.filter((s) => !(s.index === proxied && partitioned.on));
        const slot = candidates[Math.floor(Math.random() * candidates.length)]!;
        const pid = slot.proc?.pid;
        // A process that exited on its own is restarted by its exit handler, not here.
        if (pid === undefined || slot.proc?.exitCode !== null || slot.proc.signalCode !== null)
          continue;
        faults.push({ kind: 'worker-kill', pid, at: Date.now() });
        slot.killing = true;
        slot.proc?.kill('SIGKILL');
        await slot.exited;
        slot.killing = false;
        say(`SIGKILL worker ${slot.index} (pid ${pid}); ${completed}/${queued.length} done`);
        await sleep(300);
        spawnWorker(slot);
      }
    };

    const memberDown = async (kind: 'leader-stop' | 'follower-stop') => {
      const leader = await ensemble.leader();
      const member = kind === 'leader-stop' ? leader : (leader + 1) % ensemble.members.length;
      const from = Date.now();
      await ensemble.stopMember(member);
      say(`${kind}: member ${member} stopped; ${completed}/${queued.length} done`);
      await sleep(3000);
      await ensemble.startMember(member);
      faults.push({ kind, member, from, to: Date.now() });
    };
    const partition = async () => {
      // Cut off while its job runs: a claim, a process and a result in flight.
      const busyBy = Date.now() + BUSY_WAIT_MS;
      while (!done && !runningOn(eventLog, slots[proxied]!.proc?.pid) && Date.now() < busyBy)
        await sleep(50);
      const pid = slots[proxied]!.proc?.pid ?? -1;
      const busy = runningOn(eventLog, pid);
      const from = Date.now();
      partitioned.on = true;
      await network.cutOff(true);
      say(
        `partition (${network.kind}): worker ${proxied} (pid ${pid}${busy ? ', running a job' : ''}) cut off; ${completed}/${queued.length} done`,
      );
      await sleep(2 * o.sessionTimeoutMs);
      await network.cutOff(false);
      partitioned.on = false;
      faults.push({ kind: 'partition', pid, from, to: Date.now(), running: busy });
    };
    // The ensemble split 2/1: the leader cut off its peers and its clients. The other two
    // elect a leader and serve; its clients' connections go silent and move to them.
    const split = async () => {
      const cut = network.splitMember;
      if (!cut) return;
      const member = await ensemble.leader();
      const from = Date.now();
      await cut(member, true);
      say(`split: member ${member} (the leader) cut off; ${completed}/${queued.length} done`);
      await sleep(2 * o.sessionTimeoutMs);
      await cut(member, false);
      await ensemble.waitServing();
      faults.push({ kind: 'split', member, from, to: Date.now() });
    };
    const cluster = async () => {
      do {
        const stops = [() => memberDown('leader-stop'), () => memberDown('follower-stop')];
        // On a namespace network its own faults go first, while the most work is pending.
        const steps = network.splitMember ? [partition, split, ...stops] : [...stops, partition];
        for (const step of steps) {
          await sleep(2000);
          await step();
          if (done && o.cycles === 'repeat') return;
        }
      } while (!done && o.cycles === 'repeat');
    };

    const faultLoops = Promise.all([killer(), cluster()]);
    const deadline = started + o.deadlineMs;
    while (!done) {
      await sleep(500);
      try {
        completed = (await engine.counts()).completed;
      } catch {
        continue; // an ensemble fault in progress
      }
      if (completed >= queued.length) done = true;
      else if (Date.now() > deadline) {
        done = true;
        say(`deadline passed with ${completed}/${queued.length} completed`);
      }
    }
    const workDoneAt = Date.now();
    await faultLoops;
    await ensemble.waitServing();
    const durationMs = workDoneAt - started;
    say(`work done in ${durationMs} ms; reading the areas`);

    const leftovers = await readLeftovers(producer);
    // The partitioned worker must come back after the last heal, even when the work ended
    // first: wait for its renewed session (or its restarted process serving).
    const slotLog = join(dir, `worker-${proxied}.log`);
    const lastHeal = faults.flatMap((f) => (f.kind === 'partition' ? [f.to] : [])).pop();
    const backBy = Date.now() + BACK_DEADLINE_MS;
    while (
      lastHeal !== undefined &&
      !readinessOf(slotLog).some((r) => r.time > lastHeal) &&
      Date.now() < backBy
    )
      await sleep(200);
    // Graceful stop of every worker, then nothing may be left running.
    stoppingWorkers = true;
    for (const s of slots) s.proc?.kill('SIGTERM');
    await Promise.race([Promise.all(slots.map((s) => s.exited)), sleep(30_000)]);
    const liveProcesses = pids.filter(alive);
    const completedEntries = await readCompleted(producer);
    const events = readFileSync(eventLog, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as ExecEvent);
    const heals = healsOf({
      faults,
      events,
      ready: readinessOf(slotLog),
      slotPids: proxiedPids,
      workDoneAt,
    });
    // ZOOTT_CHAOS_KEEP=1 keeps the workers' logs and the execution log for a post-mortem.
    if (process.env.ZOOTT_CHAOS_KEEP) say(`logs kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
    return {
      history: { queued, completed: completedEntries, leftovers, events, faults, liveProcesses },
      durationMs,
      workDoneAt,
      heals,
      unexpectedExits,
    };
  } finally {
    stoppingWorkers = true;
    for (const s of slots) if (s.proc && s.proc.exitCode === null) s.proc.kill('SIGKILL');
    await Promise.all(slots.map((s) => s.exited));
    await producer?.close();
    await network.close();
  }
}

/** Whether the event log shows a job of worker process `pid` started and not ended. */
function runningOn(eventLog: string, pid: number | undefined): boolean {
  if (pid === undefined) return false;
  const open = new Set<string>();
  for (const line of readFileSync(eventLog, 'utf8').split('\n')) {
    let e: ExecEvent;
    try {
      e = JSON.parse(line) as ExecEvent;
    } catch {
      continue; // empty, or a line being written
    }
    if (e.pid !== pid) continue;
    if (e.event === 'start') open.add(e.exec);
    else open.delete(e.exec);
  }
  return open.size > 0;
}

const quiet = { warn: () => {} };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function bucketChildren(c: Coordinator, area: string): Promise<string[]> {
  const root = `/zoott_${area}/${WORLD}`;
  const buckets = await c.children(root);
  const lists = await Promise.all(buckets.map((b) => c.children(`${root}/${b}`)));
  return lists.flat();
}

async function readLeftovers(c: Coordinator): Promise<ChaosHistory['leftovers']> {
  const [pending, working, failed] = await Promise.all(
    ['p', 'w', 'f'].map((a) => bucketChildren(c, a)),
  );
  return { pending: pending!, working: working!, failed: failed! };
}

async function readCompleted(c: Coordinator): Promise<CompletedEntry[]> {
  const root = `/zoott_c/${WORLD}`;
  const out: CompletedEntry[] = [];
  for (const b of await c.children(root)) {
    const keys = await c.children(`${root}/${b}`);
    const nodes = await Promise.all(keys.map((k) => c.get(`${root}/${b}/${k}`)));
    keys.forEach((key, i) => {
      const node = nodes[i]!;
      const record = decodeJson<{ attempts: number; result?: { exec?: string } }>(node.data);
      out.push({
        key,
        ctime: node.stat.ctime,
        attempts: record.attempts,
        exec: record.result?.exec,
      });
    });
  }
  return out;
}
