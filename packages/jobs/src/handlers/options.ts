import { hostname } from 'node:os';
import {
  type Coordinator,
  type Engine,
  type EngineLogger,
  isZoottError,
  PermanentError,
  ZoottError,
} from '@zoott/core';
import { DEFAULT_MAX_RESULT_BYTES, type ProcessRun } from '@zoott/core/jobs';
import { unheardDeadline } from '../expiry-kill.js';
import {
  DEFAULT_KILL_GRACE_MS,
  type JobCgroupMode,
  type JobUser,
  jobUser,
  type KillDeadline,
  resolveExecutable,
} from '../jobs/index.js';
import { checkOutputCap } from '../limits.js';
import { type ExecPolicy, execPolicy, jobEnvironment } from '../policy.js';

/** Told when a job process starts and ends (metrics, and killing groups on a hard exit). */
export interface ProcessTracker {
  started(pid: number): void;
  ended(pid: number): void;
}

/** Options of {@link jobHandlers}. */
export interface JobHandlerOptions {
  /** Session used by races (racer queueing, winner decision). */
  coordinator: Coordinator;
  /** The world racers are queued in (the world the workers serve). */
  world: string;
  /** Executables allowed to run: absolute paths or globs, or a policy function. */
  allowExec: readonly string[] | ExecPolicy;
  /** Host name reported as a result's `server` (default `os.hostname()`). */
  serverName?: string;
  /** Identity written into race winner records (default the host name). */
  workerId?: string;
  /** Variables passed on to jobs on top of the minimal environment. */
  passEnv?: readonly string[];
  /**
   * Run job processes as this user (name or uid): its uid, gid and groups, `HOME` its home.
   * Needs root and util-linux `setpriv`. Unset: as this process's user (the daemon refuses
   * that for a root worker; the library leaves the decision to its caller).
   */
  runAs?: string;
  /**
   * Whether each job process gets a cgroup of its own (so all it starts ends with it):
   * `auto` (default) where the host allows one, `require` refuses jobs without one, `off`.
   */
  jobCgroup?: JobCgroupMode;
  /** Working directory of job processes (default the worker's current directory). */
  workDir?: string;
  /** Root of race input directories and of `filename` hints (default the working directory). */
  dataDir?: string;
  /** The worker's ceiling on a job's run time; a job's `timeoutMs` may only lower it. */
  timeoutMs?: number;
  killGraceMs?: number;
  /** Bytes of stdout and of stderr captured per process (default 256 KiB). */
  maxOutputBytes?: number;
  /** Cap on a result's JSON (default 256 KiB). */
  maxResultBytes?: number;
  /** Engine of `world` used to queue and cancel racers (default: one made for it). */
  engine?: Engine;
  logger?: EngineLogger;
  processes?: ProcessTracker;
}

/** The options with defaults filled in. */
export interface HandlerContext {
  c: Coordinator;
  world: string;
  policy: ExecPolicy;
  serverName: string;
  workerId: string;
  env: Record<string, string>;
  runAs: JobUser | null;
  jobCgroup: JobCgroupMode;
  workDir: string;
  dataDir: string;
  timeoutMs: number | undefined;
  killGraceMs: number;
  maxOutputBytes: number;
  maxResultBytes: number;
  engine: () => Engine;
  logger: EngineLogger | undefined;
  processes: ProcessTracker | undefined;
}

export function resolveHandlerOptions(
  options: JobHandlerOptions,
  makeEngine: () => Engine,
): HandlerContext {
  checkOutputCap(options.maxOutputBytes, 'maxOutputBytes');
  checkOutputCap(options.maxResultBytes, 'maxResultBytes');
  const policy =
    typeof options.allowExec === 'function' ? options.allowExec : execPolicy(options.allowExec);
  const workDir = options.workDir ?? process.cwd();
  let engine = options.engine;
  const runAs = options.runAs === undefined ? null : jobUser(options.runAs);
  const env = jobEnvironment(options.passEnv ?? []);
  if (runAs) env.HOME = runAs.home;
  return {
    c: options.coordinator,
    world: options.world,
    policy,
    serverName: options.serverName ?? hostname(),
    workerId: options.workerId ?? options.serverName ?? hostname(),
    env,
    runAs,
    jobCgroup: options.jobCgroup ?? 'auto',
    workDir,
    dataDir: options.dataDir ?? workDir,
    timeoutMs: options.timeoutMs,
    killGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_RESULT_BYTES,
    maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    engine: () => {
      engine ??= makeEngine();
      return engine;
    },
    logger: options.logger,
    processes: options.processes,
  };
}

/**
 * How a job process of this worker is held: its cgroup mode, the silence after which the
 * job keeper kills it (half the session timeout: the server expires a session one timeout
 * after it last heard from it, and the worker pings every third of it, so a job killed then
 * is gone before its claim can be taken over), and the deadline the keeper kills it at on its
 * own clock (ZooKeeper unheard for too long: see expiry-kill.ts).
 */
export function holding(context: HandlerContext): {
  cgroup: JobCgroupMode;
  silenceMs: number;
  deadline: KillDeadline;
} {
  return {
    cgroup: context.jobCgroup,
    silenceMs: Math.floor(context.c.sessionTimeoutMs / 2),
    deadline: unheardDeadline(context.c),
  };
}

/**
 * Refuses an executable the policy does not allow, as a permanent INVALID_JOB error (the
 * task is dead-lettered at once). One that cannot be found is left to the runner, whose
 * result says so (an `error`, no `exit`).
 */
export async function checkExecutable(context: HandlerContext, executable: string): Promise<void> {
  const found = await resolveExecutable(executable, context.workDir, context.env.PATH);
  if (found.ok && !context.policy(found.real))
    throw new ZoottError(
      'INVALID_JOB',
      `executable: ${JSON.stringify(executable)} (${describeFound(found.path, found.real)}) is not allowed on worker ${context.workerId}; its real path must match the worker's --allow-exec list`,
      { field: 'executable' },
    );
}

/** `path`, or `path → real` when a link or `..` made them differ. */
export function describeFound(path: string, real: string): string {
  return path === real ? path : `${path} → ${real}`;
}

/**
 * Turns a result that cannot fit under the cap into a permanent failure: the job's own
 * fields do not change between attempts, so a retry would fail the same way.
 */
export function permanentIfTooLarge(err: unknown, cap: number): unknown {
  if (!isZoottError(err, 'DATA_TOO_LARGE')) return err;
  return new PermanentError(
    `${err.message}: the job's own fields (arguments and custom properties) leave no room under this worker's --max-output of ${cap} bytes; shorten them or raise --max-output`,
    'DATA_TOO_LARGE',
  );
}

/**
 * Checks, before anything runs, that the job's result can be recorded at all: `build`
 * makes the result of a run with no output and the widest process fields a real run has.
 * A job that fails this fails permanently on its first attempt and never starts a process.
 */
export function checkResultFits(
  context: HandlerContext,
  build: (run: ProcessRun) => unknown,
): void {
  const now = new Date();
  const widest: ProcessRun = {
    stdout: '',
    stderr: '',
    server: context.serverName,
    pid: 4_194_304, // Linux's largest pid
    exit: 255,
    started: now,
    finished: now,
    timedOut: true,
  };
  try {
    build(widest);
  } catch (err) {
    throw permanentIfTooLarge(err, context.maxResultBytes);
  }
}
