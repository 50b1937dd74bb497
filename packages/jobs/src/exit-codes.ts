/**
 * The exit codes of zoott's three programs, `zoott`, `zoott-worker` and `zoott-amqp-bridge`:
 * one table, one meaning per code, so one script or one service manager's restart policy can
 * branch on any of them. Each program's `--help` and README list the rows it uses; no program
 * defines a code of its own (`scripts/check-facts.mjs` fails on one).
 */

/** The programs, by the name they are run as. */
export type ProgramName = 'zoott' | 'zoott-worker' | 'zoott-amqp-bridge';

const ALL: readonly ProgramName[] = ['zoott', 'zoott-worker', 'zoott-amqp-bridge'];

/** The codes by name. Stable: scripts branch on them. */
export const ExitCode = {
  OK: 0,
  /** Something failed after the program started: an unexpected error, a session lost under it. */
  FAILURE: 1,
  /** Bad command line, environment, config file or input. */
  USAGE: 2,
  /** ZooKeeper could not be reached, or the connection or session was lost. */
  UNREACHABLE: 3,
  /** ZooKeeper refused the credentials, or they may not touch that node or world. */
  AUTH: 4,
  /** No such task, world (never initialised), node or file. */
  NOT_FOUND: 5,
  /** A timeout ran out (`--timeout` of lock, wait, drain, watch). */
  TIMEOUT: 6,
  /** The task is not in a state that allows this (e.g. retry of a task that did not fail). */
  CONFLICT: 7,
  /** The demo or drain finished, but some tasks failed for good. */
  TASKS_FAILED: 8,
  /**
   * The node asked about holds data zoott cannot read (not JSON, or not of zoott's shape);
   * what could be read is still printed. Other corrupt nodes only warn.
   */
  CORRUPT: 9,
  /** The TLS handshake with RabbitMQ failed at start. */
  AMQP_TLS: 10,
  /** RabbitMQ refused access at start (user, password, vhost or permissions). */
  AMQP_ACCESS: 11,
  /** Interrupted by SIGINT (zoott: or SIGTERM); 128 + 2, as the shell has it. */
  INTERRUPTED: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The codes a child process ends with by the shell's conventions, which `zoott lock` (its
 * command) and `zoott submit --wait` (its job) pass on as their own exit code.
 */
export const ChildExitCode = {
  /** The command exists but could not be executed (not executable, permission denied). */
  CANNOT_EXECUTE: 126,
  /** No such command. */
  NOT_FOUND: 127,
  /** A process ended by signal n exits with SIGNAL_BASE + n. */
  SIGNAL_BASE: 128,
} as const;

/** The exit code of a process that signal number `signal` ended (128 + n, as the shell). */
export function signalExitCode(signal: number): number {
  return ChildExitCode.SIGNAL_BASE + signal;
}

/** One row of the table: a code, what it means, and the programs that end with it. */
export interface ExitCodeRow {
  code: number;
  /** Shown in `--help` and the READMEs. */
  meaning: string;
  programs: readonly ProgramName[];
}

/** Every code any of the programs ends with, in order. */
export const EXIT_CODES: readonly ExitCodeRow[] = Object.freeze([
  {
    code: ExitCode.OK,
    meaning: 'done (a worker or bridge: stopped by SIGTERM/SIGINT after its graceful stop)',
    programs: ALL,
  },
  {
    code: ExitCode.FAILURE,
    meaning:
      'failed after it started (an unexpected error; the ZooKeeper session closed under a running worker)',
    programs: ALL,
  },
  {
    code: ExitCode.USAGE,
    meaning: 'bad command line, environment, config file or input',
    programs: ALL,
  },
  {
    code: ExitCode.UNREACHABLE,
    meaning: 'ZooKeeper unreachable, or the connection or session lost',
    programs: ALL,
  },
  {
    code: ExitCode.AUTH,
    meaning: 'ZooKeeper refused the credentials, or they may not touch that node or world',
    programs: ALL,
  },
  {
    code: ExitCode.NOT_FOUND,
    meaning: 'no such task, world (never initialised), node or file',
    programs: ALL,
  },
  { code: ExitCode.TIMEOUT, meaning: 'a --timeout ran out', programs: ['zoott'] },
  {
    code: ExitCode.CONFLICT,
    meaning: "the task's state does not allow it",
    programs: ['zoott'],
  },
  {
    code: ExitCode.TASKS_FAILED,
    meaning: 'finished, but some tasks failed for good',
    programs: ['zoott'],
  },
  {
    code: ExitCode.CORRUPT,
    meaning: 'the task asked about holds data zoott cannot read',
    programs: ['zoott'],
  },
  {
    code: ExitCode.AMQP_TLS,
    meaning:
      'TLS with RabbitMQ failed at start (broker certificate not trusted, client certificate missing or refused)',
    programs: ['zoott-amqp-bridge'],
  },
  {
    code: ExitCode.AMQP_ACCESS,
    meaning:
      'RabbitMQ refused access at start (user or password, a vhost missing or not permitted, no permission on the queues)',
    programs: ['zoott-amqp-bridge'],
  },
  {
    code: ChildExitCode.CANNOT_EXECUTE,
    meaning: "passed on: lock's command could not be executed",
    programs: ['zoott'],
  },
  {
    code: ChildExitCode.NOT_FOUND,
    meaning: "passed on: lock's command or submit --wait's executable does not exist",
    programs: ['zoott'],
  },
  {
    code: ChildExitCode.SIGNAL_BASE,
    meaning:
      "128+n: ended by signal n (zoott-worker: 143 on a second SIGTERM; zoott: lock's command or submit --wait's job ended by it)",
    programs: ['zoott', 'zoott-worker'],
  },
  {
    code: ExitCode.INTERRUPTED,
    meaning: 'interrupted by SIGINT (zoott: or SIGTERM; zoott-worker: a second SIGINT)',
    programs: ['zoott', 'zoott-worker'],
  },
]);

/** The rows `program` ends with. */
export function exitCodesOf(program: ProgramName): ExitCodeRow[] {
  return EXIT_CODES.filter((row) => row.programs.includes(program));
}

/** `Exit codes:` and one line per code of `program`, for its `--help`. */
export function exitCodesHelp(program: ProgramName): string {
  const rows = exitCodesOf(program);
  const width = Math.max(...rows.map((row) => String(row.code).length));
  return [
    'Exit codes:',
    ...rows.map((row) => `  ${String(row.code).padStart(width)}  ${row.meaning}`),
  ].join('\n');
}
