import { isZoottError, ZoottError } from '@zoott/core';
import {
  buildRegularResult,
  DEFAULT_MAX_RESULT_BYTES,
  type ProcessRun,
  type RegularJob,
  type RegularJobResult,
} from '@zoott/core/jobs';
import type { JobCgroupMode } from './cgroup-mode.js';
import type { KillDeadline } from './keeper-link.js';
import { neverRan, type StartedProcess, type StartOptions, startProcess } from './process.js';
import { minimalEnv, resolveExecutable } from './resolve.js';

/** Options of `runRegularJob`: server name, directory, timeout, signal, allowed executables. */
export interface RunJobOptions {
  /** Host name reported as the result's `server`. */
  serverName: string;
  /** Working directory of the process (default: the worker's). */
  cwd?: string;
  /** The whole environment of the process (default: {@link minimalEnv}). */
  env?: Record<string, string>;
  /** Bytes of stdout and of stderr kept while capturing (default 256 KiB each). */
  maxOutputBytes?: number;
  /** Cap on the result JSON (default 256 KiB). */
  maxResultBytes?: number;
  /**
   * The worker's limit on run time. A job's own `timeoutMs` can only shorten it: the
   * smaller of the two applies. No limit when neither is set.
   */
  timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL (default 5000 ms). */
  killGraceMs?: number;
  /** Aborting stops the process group and rejects with `ABORTED` once it is gone. */
  signal?: AbortSignal;
  /**
   * Policy hook: return false to refuse an executable. It is given the canonical real path
   * (after PATH lookup, links and `..` resolved), which is also the path executed.
   */
  allowExec?: (resolvedPath: string) => boolean;
  /** Run the process as this user (see `jobUser`); unset: as the worker's user. */
  runAs?: StartOptions['runAs'];
  /** Called with the pid (= process group) once the process runs, e.g. to track it. */
  onSpawn?: (pid: number) => void;
  /** Called with each line the job writes to fd 3 (progress and log lines). */
  onReportLine?: (line: string) => void;
  /** Whether the job gets a cgroup of its own: `auto` (default), `require` or `off`. */
  cgroup?: JobCgroupMode;
  /**
   * The job keeper kills the job when this process has not been heard of for this long
   * (stopped, or its event loop stuck); the run then rejects. A worker gives half its
   * session timeout. Unset: the job is only killed when this process dies.
   */
  silenceMs?: number;
  /**
   * The job keeper kills the job at this deadline on its own clock, whatever this process's
   * event loop does; the run then rejects. A worker gives the moment its ZooKeeper session
   * could start to expire (see expiry-kill.ts). Unset: no deadline.
   */
  deadline?: KillDeadline;
}

/** Time between SIGTERM and SIGKILL when a job is stopped (5 s). */
export const DEFAULT_KILL_GRACE_MS = 5000;

/**
 * Runs a validated regular job to completion and returns its result JSON. Never uses a
 * shell. An executable that cannot be found or is refused yields a result with `error`,
 * `pid` 0 and no `exit` rather than a rejection, so the producer learns why. Rejects
 * only with `ABORTED` (after the process group has been killed).
 */
export async function runRegularJob(
  job: RegularJob,
  options: RunJobOptions,
): Promise<RegularJobResult> {
  const { signal } = options;
  throwIfAborted(signal);
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? minimalEnv();
  const resultOpts = { maxBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES };

  const notStarted = (exit: number, error: string): RegularJobResult =>
    buildRegularResult(job, neverRan(options.serverName, exit, error), resultOpts);

  const found = await resolveExecutable(job.executable, cwd, env.PATH);
  throwIfAborted(signal);
  if (!found.ok) return notStarted(found.exit, found.error);
  // The policy decides on the real path, and the real path is what runs (see Resolution).
  if (options.allowExec && !options.allowExec(found.real))
    return notStarted(126, `executable ${found.real} is not allowed by this worker's policy`);

  const proc = startProcess(found.real, job.arguments ?? [], job.stdin ?? '', {
    cwd,
    env,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_RESULT_BYTES,
    killGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    serverName: options.serverName,
    ...(options.runAs ? { runAs: options.runAs } : {}),
    ...(options.onReportLine ? { onReportLine: options.onReportLine } : {}),
    ...(options.cgroup !== undefined ? { cgroup: options.cgroup } : {}),
    ...(options.silenceMs !== undefined ? { silenceMs: options.silenceMs } : {}),
    ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
  });
  if (proc.pid > 0) options.onSpawn?.(proc.pid);
  const run = await supervise(proc, effectiveTimeout(job.timeoutMs, options.timeoutMs), signal);
  return buildRegularResult(job, run, resultOpts);
}

/** The smaller of the job's and the worker's timeouts, or undefined when neither is set. */
export function effectiveTimeout(jobMs?: number, workerMs?: number): number | undefined {
  if (jobMs === undefined) return workerMs;
  if (workerMs === undefined) return jobMs;
  return Math.min(jobMs, workerMs);
}

/**
 * Waits for `proc` to end, stopping it on timeout or abort. On abort it still waits for
 * the process to be gone, then rejects with `ABORTED`. An abort for a lost session kills at
 * once (the claim is gone: another worker may start the job any moment). A process the job
 * keeper killed because this one was silent rejects too: its end says nothing of the job.
 */
export async function supervise(
  proc: StartedProcess,
  timeoutMs: number | undefined,
  signal: AbortSignal | undefined,
): Promise<ProcessRun> {
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => proc.stop({ timedOut: true }), timeoutMs);
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    proc.stop({ immediate: isZoottError(signal?.reason, 'SESSION_EXPIRED') });
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  try {
    const run = await proc.done;
    if (aborted) throw abortError(signal);
    if (proc.silencedMs !== null) throw silencedError(proc.silencedMs);
    if (proc.unheardMs !== null) throw unheardError(proc.unheardMs);
    return run;
  } finally {
    if (timer) clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The error of a job the keeper killed while its worker was silent: a failed attempt (retried
 * as any other), never a result, since its signal is the keeper's, not the job's.
 */
export function silencedError(silentMs: number): ZoottError {
  return new ZoottError(
    'ABORTED',
    `the job keeper killed the job: this worker was not heard of for ${silentMs} ms (stopped or stuck), longer than half its session timeout, so its claim could have passed to another worker`,
    { op: 'runRegularJob' },
  );
}

/**
 * The error of a job this worker killed because ZooKeeper had been silent too long: the server
 * could expire the session any moment and hand the claim on, so the job ended first. A failed
 * attempt, never a result: the signal is the worker's, not the job's.
 */
export function unheardError(silentMs: number): ZoottError {
  return new ZoottError(
    'ABORTED',
    `this worker killed the job: ZooKeeper was not heard from for ${silentMs} ms, so the server could soon expire the session and its claim pass to another worker`,
    { op: 'runRegularJob' },
  );
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

function abortError(signal: AbortSignal | undefined): ZoottError {
  return new ZoottError('ABORTED', 'the job was aborted; its process group was stopped', {
    op: 'runRegularJob',
    cause: signal?.reason,
  });
}
