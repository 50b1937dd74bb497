import * as fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CgroupSupport,
  cgroupPids,
  cgroupPopulated,
  giveBackJobCgroup,
  jobCgroupSupport,
  killCgroup,
  takeJobCgroup,
} from './cgroup.js';
import type { JobCgroupMode } from './cgroup-mode.js';
import { type KillDeadline, keeperLink } from './keeper-link.js';
import { followTree, procTable } from './keeper-main.js';
import { type Launch, launch } from './launcher.js';

// What holds a job's processes, so that they end with the job (and with its claim):
// - a cgroup v2 of its own where this process may make one (root, or a delegated subtree):
//   every descendant is in it, whatever it does, and one write kills them all;
// - else its process group, and the descendants found by following parent links (a
//   descendant that leaves the group and whose parent exits before anyone looks escapes).
// In both, the job keeper (keeper-main.ts) knows the job, and kills it when the worker dies,
// stops answering for the job's silence limit, or lets the job's kill deadline pass.

export { JOB_CGROUP_MODES, type JobCgroupMode } from './cgroup-mode.js';

/** What jobs of this process are held by under `mode`: a cgroup root, or why not. */
export function containmentFor(mode: JobCgroupMode = 'auto'): CgroupSupport {
  if (mode === 'off') return { ok: false, reason: 'turned off (job cgroup: off)' };
  const support = jobCgroupSupport();
  if (support.ok) keeperLink().adoptRoot(support.root);
  return support;
}

/** Sends a signal; a process or group already gone is no error. */
function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone.
  }
}

/** Every job holder of this process not yet released, for {@link killAllJobs}. */
const open = new Set<Containment>();

/** SIGKILLs every job of this process now (a worker's forced exit). */
export function killAllJobs(): void {
  for (const holder of open) holder.signal('SIGKILL');
}

/** Jobs killed by {@link killJobsUnheard}: how long ZooKeeper had been silent then. */
const unheard = new WeakMap<Containment, number>();

/**
 * SIGKILLs every job of this process because ZooKeeper has been silent for `silentMs`: the
 * server may expire the session soon, and another worker then run the jobs again. Each run
 * so ended rejects (its signal is the worker's, not the job's): see `Containment.unheardFor`.
 */
export function killJobsUnheard(silentMs: number): number {
  let killed = 0;
  for (const holder of open) {
    if (!unheard.has(holder)) killed++;
    unheard.set(holder, silentMs);
    holder.signal('SIGKILL');
  }
  return killed;
}

/** Options of {@link openContainment}. */
export interface ContainmentOptions {
  mode?: JobCgroupMode;
  /**
   * Kill the job when the worker has not been heard of for this long (the keeper's heartbeat);
   * unset: only when the worker dies.
   */
  silenceMs?: number;
  /**
   * When the keeper kills the job on its own clock, whatever this process does (in a worker:
   * before its ZooKeeper session could expire; see expiry-kill.ts). Unset: no deadline.
   */
  deadline?: KillDeadline;
}

/** One job's holder: how to start it in it, signal all of it, and clean up after it. */
export interface Containment {
  /** The job's cgroup, or null (process group only). */
  readonly cgroup: string | null;
  /** The launcher command for `argv`, keeping descriptors 0..`lastFd`, with environment `env`. */
  launch(argv: readonly string[], lastFd: number, env: Readonly<Record<string, string>>): Launch;
  /** The job's leader runs as `pid` (also its process group). */
  started(pid: number): void;
  /** SIGTERM or SIGKILL to every process of the job. */
  signal(signal: 'SIGTERM' | 'SIGKILL'): void;
  /** How long the worker was silent when the keeper killed the job, or null if it did not. */
  silencedFor(): Promise<number | null>;
  /**
   * How long ZooKeeper was silent when the worker or the keeper (at the job's deadline) killed
   * the job for it, or null if neither did. After {@link silencedFor}, which syncs the keeper.
   */
  unheardFor(): number | null;
  /** After the leader ended: kills what is left, removes the cgroup, forgets the job. */
  release(): void;
}

/**
 * Opens the holder of one job.
 *
 * @throws Error under `require` when no cgroup can be made, naming why.
 */
export function openContainment(options: ContainmentOptions = {}): Containment {
  const support = containmentFor(options.mode);
  if (!support.ok && options.mode === 'require')
    throw new Error(`job cgroup required but not available: ${support.reason}`);
  const keeper = keeperLink();
  const cgroup = support.ok ? takeJobCgroup(support.root) : null;
  const id = keeper.add(
    { cgroup, pgid: null, silenceMs: options.silenceMs ?? null },
    options.deadline,
  );
  let pgid: number | null = null;
  let released = false;

  const holder: Containment = {
    cgroup,
    launch: (argv, lastFd, env) => launch(argv, cgroup, lastFd, env),
    started(pid) {
      pgid = pid;
      if (cgroup === null) keeper.setGroup(id, pid);
    },
    signal(signal) {
      if (cgroup !== null) {
        // One write kills all of it; SIGTERM goes to each process, which may handle it.
        if (signal === 'SIGKILL') killCgroup(cgroup);
        else for (const pid of cgroupPids(cgroup)) kill(pid, signal);
        if (pgid !== null) kill(-pgid, signal);
        return;
      }
      if (pgid === null) return;
      // Without a cgroup, what left the group is found by its parent links: by the keeper,
      // which remembers what it saw (a look at every process of the host costs milliseconds).
      if (signal === 'SIGKILL') {
        kill(-pgid, signal);
        keeper.kill(id);
        return;
      }
      // Looked at before the signal: a leader that dies of it takes the links with it.
      const known = new Map<number, string>();
      followTree(procTable(fs), pgid, known);
      kill(-pgid, signal);
      for (const pid of known.keys()) kill(pid, signal);
    },
    silencedFor: () => keeper.silencedFor(id),
    unheardFor: () => unheard.get(holder) ?? keeper.unheardFor(id),
    release() {
      if (released) return;
      released = true;
      open.delete(holder);
      if (cgroup === null) {
        // The leader has ended: its group, and what the keeper has seen of the job, go.
        if (pgid !== null) kill(-pgid, 'SIGKILL');
        keeper.reap(id);
        keeper.forget(id);
        return;
      }
      killCgroup(cgroup);
      void (async () => {
        // A SIGKILLed process takes a moment to leave its cgroup.
        const until = Date.now() + 10_000;
        while (cgroupPopulated(cgroup) && Date.now() < until) await sleep(5);
        // Empty, it serves the next job; one that does not empty stays the keeper's, which
        // kills what is in it when the worker ends.
        if (cgroupPopulated(cgroup)) return;
        giveBackJobCgroup(cgroup);
        keeper.forget(id);
      })();
    },
  };
  open.add(holder);
  return holder;
}
