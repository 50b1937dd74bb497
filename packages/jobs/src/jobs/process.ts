import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import type { ProcessRun } from '@zoott/core/jobs';
import type { JobCgroupMode } from './cgroup-mode.js';
import { type Containment, openContainment } from './containment.js';
import type { KillDeadline } from './keeper-link.js';
import { REPORT_FD, readLines } from './report-channel.js';

/** How a job process is started: directory, environment and output caps. */
export interface StartOptions {
  cwd: string;
  env: Record<string, string>;
  /** Bytes kept per stream; the rest is read and dropped (the pipe never blocks the child). */
  maxOutputBytes: number;
  /** Time between SIGTERM and SIGKILL when the process is stopped. */
  killGraceMs: number;
  serverName: string;
  /**
   * Run the process as this user (uid, gid and supplementary groups), switched by
   * `setpriv` in the job's own process just before it execs the job. Unset: the worker's.
   */
  runAs?: { name: string; uid: number; gid: number } | null;
  /**
   * Called with each line the job writes to file descriptor 3 (see report-channel.ts);
   * unset: the job gets no fd 3.
   */
  onReportLine?: (line: string) => void;
  /** Whether the job gets a cgroup of its own (see containment.ts); default `auto`. */
  cgroup?: JobCgroupMode;
  /**
   * The job keeper kills the job when this process has not been heard of for this long (it
   * stopped or hangs): in a worker, within its session timeout. Unset: only when it dies.
   */
  silenceMs?: number;
  /** The keeper kills the job at this deadline on its own clock (see containment.ts). */
  deadline?: KillDeadline;
}

/** A started process (or one that failed to start) and the means to stop it. */
export interface StartedProcess {
  /** 0 when the process could not be started. */
  readonly pid: number;
  /** Resolves once, with the first chunk of stdout or stderr output. */
  readonly firstOutput: Promise<void>;
  /** Resolves when the process has ended and its pipes are closed. Never rejects. */
  readonly done: Promise<ProcessRun>;
  /**
   * Stops the whole process group: SIGTERM, then SIGKILL after the grace time
   * (`immediate` sends SIGKILL at once). Safe to call more than once, or after the end.
   */
  stop(options?: { immediate?: boolean; timedOut?: boolean }): void;
  /**
   * Once `done` resolved: how long this process had been silent when the job keeper killed
   * the job (the worker stopped or hung past `silenceMs`), or null when it did not.
   */
  readonly silencedMs: number | null;
  /**
   * Once `done` has settled: how long ZooKeeper had been silent when this worker killed the
   * job before its session could expire (`killJobsUnheard`), or null when it did not.
   */
  readonly unheardMs: number | null;
}

/** Signal number for a Node signal name (`SIGKILL` → 9). */
export function signalNumber(name: NodeJS.Signals): number {
  return constants.signals[name] ?? 0;
}

let deathSignalTool: string | null | undefined;

/**
 * util-linux `setpriv` when it can set a parent-death signal (Linux, util-linux 2.33+), else
 * `null`; looked up once, in the system directories only (never the job's PATH).
 *
 * Why: a worker that is SIGKILLed (or OOM-killed) cannot stop its jobs, and its claim
 * vanishes with its session, so another worker starts the same job while the orphan still
 * runs. With `setpriv --pdeathsig KILL` the kernel kills the job the moment its worker dies.
 * `setpriv` sets the signal and then execs the job: same pid, arguments and exit status.
 */
export function parentDeathTool(): string | null {
  if (deathSignalTool !== undefined) return deathSignalTool;
  deathSignalTool = null;
  if (process.platform !== 'linux') return null;
  for (const path of ['/usr/bin/setpriv', '/bin/setpriv']) {
    if (!existsSync(path)) continue;
    try {
      const help = execFileSync(path, ['--help'], { encoding: 'utf8', stdio: 'pipe' });
      if (help.includes('--pdeathsig')) deathSignalTool = path;
    } catch {
      // Not runnable here: jobs start without the parent-death signal.
    }
    break;
  }
  return deathSignalTool;
}

/**
 * Spawns `path` without a shell, in its own process group (detached), writes `stdin`
 * and captures output up to a cap. When the group leader ends, whatever else is left in
 * its group is killed too, so nothing it started outlives the job. Where the system has
 * `setpriv` (see {@link parentDeathTool}), the job is also killed if this process dies
 * without stopping it; processes the job started itself are not reached that way.
 */
export function startProcess(
  path: string,
  args: readonly string[],
  stdin: string,
  opts: StartOptions,
): StartedProcess {
  const started = new Date();
  const opened = openAndSpawn(path, args, opts);
  if (opened instanceof Error) return failedStart(opened, started, opts.serverName);
  const { child, holder } = opened;

  const out = new Capture(opts.maxOutputBytes);
  const err = new Capture(opts.maxOutputBytes);
  let resolveFirst!: () => void;
  const firstOutput = new Promise<void>((resolve) => {
    resolveFirst = resolve;
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    out.add(chunk);
    resolveFirst();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err.add(chunk);
    resolveFirst();
  });
  const reports = opts.onReportLine ? (child.stdio[REPORT_FD] as Readable | null) : null;
  if (reports && opts.onReportLine) readLines(reports, opts.onReportLine);
  // A child that exits without reading its input makes the write fail with EPIPE; that is
  // the child's business, not an error of the run.
  child.stdin?.on('error', () => {});
  child.stdin?.end(stdin);

  let exited = false;
  let timedOut = false;
  let silencedMs: number | null = null;
  let unheardMs: number | null = null;
  let killTimer: NodeJS.Timeout | undefined;

  const done = new Promise<ProcessRun>((resolveDone) => {
    let settled = false;
    const settle = (run: ProcessRun) => {
      if (settled) return;
      settled = true;
      if (killTimer) clearTimeout(killTimer);
      resolveDone(run);
    };
    const base = () => ({
      stdout: out.text(),
      stderr: err.text(),
      server: opts.serverName,
      started,
      finished: new Date(),
      truncated: out.truncated || err.truncated,
      timedOut,
    });
    child.once('error', (error) => {
      // Without a pid the process never ran, and no 'exit' will follow.
      if (child.pid !== undefined) return;
      holder.release();
      settle({ ...base(), pid: 0, exit: exitForSpawnError(error), error: error.message });
    });
    child.once('exit', () => {
      exited = true;
      // Nothing the job started outlives it: whatever is left of it (background children,
      // a descendant that called setsid) is killed now.
      holder.signal('SIGKILL');
      // A descendant out of reach (no cgroup) could hold the pipes open forever; stop
      // waiting for them after the grace time.
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        reports?.destroy();
      }, opts.killGraceMs).unref();
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      const pid = child.pid ?? 0;
      const run = base();
      // A killed job may have been killed by the keeper while this process was stopped.
      void (signal !== null ? holder.silencedFor() : Promise.resolve(null)).then((silent) => {
        silencedMs = silent;
        unheardMs = holder.unheardFor();
        holder.release();
        settle(
          signal !== null
            ? { ...run, pid, signal: signalNumber(signal) }
            : { ...run, pid, exit: code ?? 0 },
        );
      });
    });
  });

  return {
    pid: child.pid ?? 0,
    firstOutput,
    done,
    get silencedMs() {
      return silencedMs;
    },
    get unheardMs() {
      return unheardMs;
    },
    stop({ immediate = false, timedOut: isTimeout = false } = {}) {
      if (exited || child.pid === undefined) return;
      if (isTimeout) timedOut = true;
      if (immediate) {
        holder.signal('SIGKILL');
        return;
      }
      holder.signal('SIGTERM');
      if (!killTimer) {
        killTimer = setTimeout(() => holder.signal('SIGKILL'), opts.killGraceMs);
        killTimer.unref();
      }
    },
  };
}

/** The job's holder and its spawned leader, or the error that kept it from starting. */
function openAndSpawn(
  path: string,
  args: readonly string[],
  opts: StartOptions,
): { child: ChildProcess; holder: Containment } | Error {
  let holder: Containment;
  try {
    holder = openContainment({
      ...(opts.cgroup !== undefined ? { mode: opts.cgroup } : {}),
      ...(opts.silenceMs !== undefined ? { silenceMs: opts.silenceMs } : {}),
      ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}),
    });
  } catch (err) {
    return err as Error;
  }
  try {
    const child = spawnJob(path, args, opts, holder);
    if (child.pid !== undefined) holder.started(child.pid);
    return { child, holder };
  } catch (err) {
    holder.release();
    return err as Error;
  }
}

/**
 * Spawns the job in a process group of its own (`detached`), through the launcher (into its
 * cgroup, every descriptor past the job's own closed), under `setpriv` when present:
 * `--pdeathsig KILL` ends it with its worker, and `runAs` switches user.
 *
 * @throws Error when another user is asked for and setpriv is missing.
 */
function spawnJob(
  path: string,
  args: readonly string[],
  opts: StartOptions,
  holder: Containment,
): ChildProcess {
  const tool = parentDeathTool();
  // Never fall back to running as the worker's user when another user was asked for.
  if (opts.runAs && !tool)
    throw new Error(
      `cannot run as ${opts.runAs.name}: util-linux setpriv is missing (/usr/bin/setpriv)`,
    );
  const asUser = opts.runAs
    ? ['--reuid', String(opts.runAs.uid), '--regid', String(opts.runAs.gid), '--init-groups']
    : [];
  // In a cgroup the whole job can die with the worker. Without one, a descendant that called
  // setsid is known only by its parent links, which the leader's death would cut: the leader
  // is stopped instead, and the keeper, reading the worker's end, kills what it finds below.
  const deathSignal = holder.cgroup !== null ? 'KILL' : 'STOP';
  const argv = tool
    ? [tool, ...asUser, '--pdeathsig', deathSignal, '--', path, ...args]
    : [path, ...args];
  // fd 3 is the job's report channel (progress and log lines) when someone listens.
  const own: 'pipe'[] = opts.onReportLine
    ? ['pipe', 'pipe', 'pipe', 'pipe']
    : ['pipe', 'pipe', 'pipe'];
  const launcher = holder.launch(argv, own.length - 1, opts.env);
  return spawn(launcher.file, launcher.args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    shell: false,
    stdio: [...own, ...launcher.extraStdio],
    windowsHide: true,
  });
}

function exitForSpawnError(error: Error): number {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 127 : 126;
}

/**
 * The run of a process that never ran (not found, refused, killed first, or its spawn failed):
 * no output, pid 0, and the exit code and error that say why. It finishes now; it started
 * `started`, or now too.
 */
export function neverRan(server: string, exit: number, error: string, started?: Date): ProcessRun {
  const finished = new Date();
  return {
    stdout: '',
    stderr: '',
    server,
    pid: 0,
    exit,
    error,
    started: started ?? finished,
    finished,
  };
}

function failedStart(error: Error, started: Date, serverName: string): StartedProcess {
  const run = neverRan(serverName, exitForSpawnError(error), error.message, started);
  return {
    pid: 0,
    firstOutput: new Promise<void>(() => {}),
    done: Promise.resolve(run),
    silencedMs: null,
    unheardMs: null,
    stop() {},
  };
}

/** Keeps the first `max` bytes of a stream and remembers whether more came. */
class Capture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}

  add(chunk: Buffer): void {
    const room = this.max - this.size;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  /** The captured bytes as UTF-8 (a character cut by the cap becomes U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
