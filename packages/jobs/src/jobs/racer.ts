import type { ProcessRun } from '@zoott/core/jobs';
import type { JobCgroupMode } from './cgroup-mode.js';
import type { KillDeadline } from './keeper-link.js';
import { neverRan, type StartOptions, startProcess } from './process.js';
import { DEFAULT_KILL_GRACE_MS, silencedError, unheardError } from './regular.js';
import { minimalEnv, resolveExecutable } from './resolve.js';

/** How a racer is started: the server name it reports, directory, environment. */
export interface RacerOptions {
  serverName: string;
  cwd?: string;
  env?: Record<string, string>;
  /** Bytes of stdout and of stderr kept (default 256 KiB each). */
  maxOutputBytes?: number;
  killGraceMs?: number;
  /**
   * Exit codes that count as a normal end; any other code wins. Default: every exit code
   * (the spec: a process that exited, with any code, ended normally; only one killed by a
   * signal did not). `[0]` makes a non-zero exit win.
   */
  normalExitCodes?: readonly number[];
  allowExec?: (resolvedPath: string) => boolean;
  /** Run the process as this user (see `jobUser`); unset: as the worker's user. */
  runAs?: StartOptions['runAs'];
  /** Whether the racer gets a cgroup of its own: `auto` (default), `require` or `off`. */
  cgroup?: JobCgroupMode;
  /** See `runRegularJob`'s `silenceMs`: a racer the keeper killed rejects `done` and `outcome`. */
  silenceMs?: number;
  /** See `runRegularJob`'s `deadline`: a racer the keeper killed at it rejects too. */
  deadline?: KillDeadline;
}

/** How a racer did: `won` by writing output or by ending abnormally, or `lost`. */
export type RacerOutcome =
  | { result: 'won'; reason: 'output' | 'abnormal' }
  | { result: 'lost'; reason: 'normal' };

/** A running racer: its pid, its outcome as soon as known, and a way to kill it. */
export interface RacerHandle {
  /** The racer's pid (also its process group) once started; 0 when it never started. */
  readonly pid: Promise<number>;
  /** Settles as soon as the outcome is known: at the first output byte or at the end. */
  readonly outcome: Promise<RacerOutcome>;
  /** The complete run once the process has ended (use it for the winner's record). */
  readonly done: Promise<ProcessRun & { stdin: string }>;
  /**
   * Stops the racer's process group (SIGTERM, SIGKILL after the grace time). A racer
   * killed before it started ends with `error` set; the outcome of a killed racer only
   * tells how it ended, not that it beat anyone.
   */
  kill(options?: { immediate?: boolean }): void;
}

/**
 * Starts one racer of a race job: `executable` with `args`, `data` on its stdin. The race
 * rule of the seed: the first racer that writes anything to stdout or stderr, or that does
 * not end normally (killed by a signal, failing to start, or, when `normalExitCodes` is
 * given, an exit code outside it), wins; one that ends normally without output loses. The orchestrator kills
 * the others and reads the winner's `done`.
 */
export function runRacer(
  executable: string,
  args: readonly string[],
  data: string,
  options: RacerOptions,
): RacerHandle {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? minimalEnv();
  const normal = options.normalExitCodes ? new Set(options.normalExitCodes) : null;
  let killed = false;
  let stopProcess: ((killOptions?: { immediate?: boolean }) => void) | undefined;

  const started = (async () => {
    const found = await resolveExecutable(executable, cwd, env.PATH);
    const refused =
      found.ok && options.allowExec && !options.allowExec(found.real)
        ? `executable ${found.real} is not allowed by this worker's policy`
        : null;
    if (!found.ok || refused !== null || killed) {
      const run = neverRan(
        options.serverName,
        found.ok ? 126 : found.exit,
        found.ok ? (refused ?? 'killed before it started') : found.error,
      );
      return { proc: null, run };
    }
    const proc = startProcess(found.real, args, data, {
      cwd,
      env,
      maxOutputBytes: options.maxOutputBytes ?? 256 * 1024,
      killGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
      serverName: options.serverName,
      ...(options.runAs ? { runAs: options.runAs } : {}),
      ...(options.cgroup !== undefined ? { cgroup: options.cgroup } : {}),
      ...(options.silenceMs !== undefined ? { silenceMs: options.silenceMs } : {}),
      ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
    });
    stopProcess = (o) => proc.stop(o);
    return { proc, run: null };
  })();

  // A racer the keeper killed neither won nor lost: its end was not its own.
  const done = started.then(async ({ proc, run }) => {
    const ran = run ?? (await proc!.done);
    if (proc && proc.silencedMs !== null) throw silencedError(proc.silencedMs);
    if (proc && proc.unheardMs !== null) throw unheardError(proc.unheardMs);
    return { ...ran, stdin: data };
  });

  const outcome = started.then(async ({ proc }): Promise<RacerOutcome> => {
    const ended = done.then((run): RacerOutcome => {
      const normalEnd =
        run.signal == null && run.error === undefined && (normal?.has(run.exit ?? 0) ?? true);
      if (!normalEnd) return { result: 'won', reason: 'abnormal' };
      // Output that arrived with the end still wins.
      if (run.stdout.length > 0 || run.stderr.length > 0)
        return { result: 'won', reason: 'output' };
      return { result: 'lost', reason: 'normal' };
    });
    if (!proc) return ended;
    const spoke = proc.firstOutput.then((): RacerOutcome => ({ result: 'won', reason: 'output' }));
    return Promise.race([spoke, ended]);
  });

  return {
    pid: started.then(({ proc }) => proc?.pid ?? 0),
    outcome,
    done,
    kill(killOptions) {
      killed = true;
      stopProcess?.(killOptions);
    },
  };
}
