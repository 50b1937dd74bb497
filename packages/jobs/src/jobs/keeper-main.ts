// The job keeper: one small Node process per worker process, started with its first job (see
// keeper-link.ts). It outlives the worker and ends the worker's jobs when the worker cannot:
//
// - the worker died (SIGKILL, the OOM killer, a crash): its end of the control pipe closes,
//   the keeper reads end-of-file, kills every job it was told of and exits;
// - the worker stopped answering (SIGSTOP, a frozen event loop): no heartbeat came for a job's
//   `silenceMs` (half the session timeout in the daemon), so the server may soon expire the
//   session and another worker run the job again: the keeper kills that job first and tells
//   the worker, should it come back, that it did;
// - a job's kill deadline passed: each heartbeat carries, per job, the moment its worker's
//   ZooKeeper session could start to expire (its last reply plus a margin, see expiry-kill.ts)
//   on CLOCK_MONOTONIC, the host's clock both processes read (`process.hrtime`). The keeper
//   kills the job at that moment on its own timer, whatever the worker's event loop does then
//   (held up on a loaded host, stopped, or cut off and not yet aware): a late heartbeat only
//   moves a deadline the worker computed when it sent it, never later than its last reply.
//
// Its source is the functions of this file, sent to `node -` (so it runs the same from the
// sources and from the build). Each is therefore self-contained: no imports, no module-level
// names; what one needs of another comes in `KeeperDeps`.

import type * as Fs from 'node:fs';
import type * as Net from 'node:net';
import { ExitCode } from '../exit-codes.js';

/** One process in the keeper's view: parent, process group, start time (to tell a reused pid). */
export interface ProcEntry {
  ppid: number;
  pgid: number;
  start: string;
}

/** Every process of the host now, from `/proc/<pid>/stat`. */
export function procTable(fs: typeof Fs): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name is in parentheses and may hold anything; fields follow the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      table.set(Number(name), {
        ppid: Number(fields[1]),
        pgid: Number(fields[2]),
        start: fields[19] ?? '',
      });
    } catch {
      // Gone meanwhile.
    }
  }
  return table;
}

/**
 * Adds to `known` (pid → start time) every live process of process group `pgid` and every
 * descendant of a process in `known`, following parent links, and drops the known ones that
 * are gone (or whose pid now belongs to another process).
 */
export function followTree(
  table: Map<number, ProcEntry>,
  pgid: number,
  known: Map<number, string>,
): void {
  for (const [pid, start] of known) if (table.get(pid)?.start !== start) known.delete(pid);
  for (const [pid, entry] of table) if (entry.pgid === pgid) known.set(pid, entry.start);
  const children = new Map<number, number[]>();
  for (const [pid, entry] of table) {
    const list = children.get(entry.ppid);
    if (list) list.push(pid);
    else children.set(entry.ppid, [pid]);
  }
  const queue = [...known.keys()];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (known.has(child)) continue;
      known.set(child, table.get(child)!.start);
      queue.push(child);
    }
  }
}

/** A job as the keeper holds it: its cgroup, or its process group and the processes seen. */
export interface KeptJob {
  cgroup: string | null;
  pgid: number | null;
  silenceMs: number | null;
  /** When to kill the job (CLOCK_MONOTONIC ms) and when its worker last heard ZooKeeper. */
  until: { at: number; heardAt: number } | null;
  known: Map<number, string>;
  killed: boolean;
}

/** SIGKILLs a job: its cgroup at once, or its process group and every process seen of it. */
export function killKept(
  fs: typeof Fs,
  job: KeptJob,
  follow: (table: Map<number, ProcEntry>, pgid: number, known: Map<number, string>) => void,
  table: (fs: typeof Fs) => Map<number, ProcEntry>,
): void {
  job.killed = true;
  if (job.cgroup !== null) {
    try {
      fs.writeFileSync(`${job.cgroup}/cgroup.kill`, '1');
    } catch {
      // Gone already.
    }
    return;
  }
  if (job.pgid === null) return;
  // Stop every process found before killing any: a stopped process cannot fork out of the
  // set. Two looks, so a child forked between the first look and its parent's stop is found.
  const signal = (pid: number, sig: 'SIGSTOP' | 'SIGKILL') => {
    try {
      process.kill(pid, sig);
    } catch {
      // Gone.
    }
  };
  for (let look = 0; look < 2; look++) {
    follow(table(fs), job.pgid, job.known);
    signal(-job.pgid, 'SIGSTOP');
    for (const pid of job.known.keys()) signal(pid, 'SIGSTOP');
  }
  signal(-job.pgid, 'SIGKILL');
  for (const pid of job.known.keys()) signal(pid, 'SIGKILL');
}

/**
 * Removes the keeper's job cgroups once their processes are gone (a SIGKILLed process takes a
 * moment; 5 s at most), then the empty ones the worker kept for its next jobs and the worker's
 * own under `root`, then calls `done`.
 */
export function removeCgroups(
  fs: typeof Fs,
  cgroups: readonly string[],
  root: string | null,
  done: () => void,
): void {
  const until = performance.now() + 5000;
  const sweep = () => {
    let left = false;
    for (const cgroup of cgroups) {
      try {
        fs.rmdirSync(cgroup);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') left = true;
      }
    }
    if (left && performance.now() < until) {
      setTimeout(sweep, 20);
      return;
    }
    if (root !== null) {
      let spares: string[] = [];
      try {
        spares = fs.readdirSync(root).filter((n) => n.startsWith('job-'));
      } catch {
        // Gone.
      }
      for (const name of [...spares.map((n) => `${root}/${n}`), root]) {
        try {
          fs.rmdirSync(name);
        } catch {
          // Still in use, or gone.
        }
      }
    }
    done();
  };
  sweep();
}

/** What {@link deadlineWatch} is given with each heartbeat: [job id, deadline, last reply]. */
export type GivenDeadlines = [number, number?, number?][];

/**
 * Kills each job of `jobs` when its kill deadline passes, and says so (`unheard`). The
 * deadlines are read on CLOCK_MONOTONIC (`process.hrtime`), the clock the worker computed them
 * on: the keeper's own clock, whatever the worker does. One timer for the earliest, set again
 * with every heartbeat; `check` (every 50 ms) catches one that fired late.
 */
export function deadlineWatch(
  jobs: Map<number, KeptJob>,
  kill: (job: KeptJob) => void,
  say: (msg: object) => void,
): { given(until: GivenDeadlines): void; check(): void } {
  const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;
  let timer: NodeJS.Timeout | null = null;
  const check = () => {
    const now = monotonicMs();
    for (const [id, job] of jobs)
      if (!job.killed && job.until !== null && now >= job.until.at) {
        kill(job);
        say({ t: 'unheard', ids: [id], silentMs: Math.round(now - job.until.heardAt) });
      }
  };
  const arm = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    let next = Number.POSITIVE_INFINITY;
    for (const job of jobs.values())
      if (!job.killed && job.until !== null) next = Math.min(next, job.until.at);
    if (next === Number.POSITIVE_INFINITY) return;
    timer = setTimeout(
      () => {
        check();
        arm();
      },
      Math.max(0, Math.ceil(next - monotonicMs())),
    );
  };
  return {
    given(until) {
      for (const [id, at, heardAt] of until) {
        const job = jobs.get(id);
        if (job) job.until = at !== undefined && heardAt !== undefined ? { at, heardAt } : null;
      }
      arm();
    },
    check,
  };
}

/** What the keeper's source passes to {@link keeperMain}. */
export interface KeeperDeps {
  fs: typeof Fs;
  net: typeof Net;
  procTable: typeof procTable;
  followTree: typeof followTree;
  killKept: typeof killKept;
  removeCgroups: typeof removeCgroups;
  deadlineWatch: typeof deadlineWatch;
}

/** A control line from the worker (see keeper-link.ts for the sending side). */
interface ControlLine {
  t: 'beat' | 'root' | 'add' | 'pgid' | 'kill' | 'reap' | 'forget' | 'sync';
  id?: number;
  /** With `beat`: [job id, kill deadline, last reply] (CLOCK_MONOTONIC ms), or [id] for none. */
  until?: GivenDeadlines;
  path?: string;
  cgroup?: string | null;
  pgid?: number;
  silenceMs?: number | null;
  n?: number;
}

/**
 * The keeper's body. Reads control lines on fd 3, writes its notices as JSON lines on stdout.
 * Timing is monotonic (`performance.now()`, and CLOCK_MONOTONIC for the deadlines the worker
 * sends), so a clock step cannot kill a job.
 */
export function keeperMain(deps: KeeperDeps): void {
  const { fs } = deps;
  const jobs = new Map<number, KeptJob>();
  let root: string | null = null;
  let heard = performance.now();
  let ending = false;
  const say = (msg: object) => {
    process.stdout.write(`${JSON.stringify(msg)}\n`);
  };
  process.stdout.on('error', () => undefined);

  // Kills the processes seen of a job, each only if its pid still names the process seen
  // (same start time): a pid is reused once its process is gone.
  const reap = (job: KeptJob) => {
    for (const [pid, start] of job.known) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] === start)
          process.kill(pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    }
  };

  const onLine = (message: ControlLine) => {
    heard = performance.now();
    const id = message.id ?? -1;
    const job = jobs.get(id);
    if (message.t === 'root') root = message.path ?? null;
    else if (message.t === 'add')
      jobs.set(id, {
        cgroup: message.cgroup ?? null,
        pgid: message.pgid ?? null,
        silenceMs: message.silenceMs ?? null,
        until: null,
        known: new Map(),
        killed: false,
      });
    else if (message.t === 'pgid' && job) job.pgid = message.pgid ?? null;
    else if (message.t === 'kill' && job) deps.killKept(fs, job, deps.followTree, deps.procTable);
    else if (message.t === 'reap' && job) reap(job);
    else if (message.t === 'forget') jobs.delete(id);
    else if (message.t === 'sync') say({ t: 'synced', n: message.n });
    else if (message.t === 'beat' && message.until) deadlines.given(message.until);
  };
  const deadlines = deps.deadlineWatch(
    jobs,
    (job) => deps.killKept(fs, job, deps.followTree, deps.procTable),
    say,
  );

  // Silence: a job whose worker has not been heard of for its silenceMs is killed, and the
  // worker told (it reads it when it runs again). Checked often: the margin is the session's.
  setInterval(() => {
    const silent = performance.now() - heard;
    const ids: number[] = [];
    for (const [id, job] of jobs)
      if (!job.killed && job.silenceMs !== null && silent > job.silenceMs) {
        deps.killKept(fs, job, deps.followTree, deps.procTable);
        ids.push(id);
      }
    if (ids.length > 0) say({ t: 'silenced', ids, silentMs: Math.round(silent) });
    deadlines.check();
  }, 50);

  // A job without a cgroup is known by its process group; a descendant that leaves the group
  // (setsid) is found by following parent links, remembered while its parent lives.
  setInterval(() => {
    const group = [...jobs.values()].filter((j) => j.cgroup === null && j.pgid !== null);
    if (group.length === 0) return;
    const table = deps.procTable(fs);
    for (const job of group) if (!job.killed) deps.followTree(table, job.pgid!, job.known);
  }, 500);

  const end = () => {
    if (ending) return;
    ending = true;
    for (const job of jobs.values()) deps.killKept(fs, job, deps.followTree, deps.procTable);
    const cgroups = [...jobs.values()].flatMap((j) => (j.cgroup === null ? [] : [j.cgroup]));
    deps.removeCgroups(fs, cgroups, root, () => process.exit(ExitCode.OK));
  };

  let rest = '';
  const control = new deps.net.Socket({ fd: 3, readable: true, writable: false });
  control.setEncoding('utf8');
  control.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      try {
        onLine(JSON.parse(line) as ControlLine);
      } catch {
        // Not ours; ignore.
      }
    }
  });
  control.on('end', end);
  control.on('close', end);
  control.on('error', end);
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, end);
  say({ t: 'ready', pid: process.pid });
}

/** The program `node -` runs as the keeper: the functions above and the call. */
export function keeperSource(): string {
  return [
    `const procTable = ${procTable.toString()};`,
    `const followTree = ${followTree.toString()};`,
    `const killKept = ${killKept.toString()};`,
    `const removeCgroups = ${removeCgroups.toString()};`,
    `const deadlineWatch = ${deadlineWatch.toString()};`,
    `(${keeperMain.toString()})({ fs: require('node:fs'), net: require('node:net'), procTable, followTree, killKept, removeCgroups, deadlineWatch });`,
  ].join('\n');
}
