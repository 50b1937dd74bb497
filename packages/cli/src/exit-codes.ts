/**
 * Exit codes of `zoott`, stable so scripts can branch on them. `lock` and `submit --wait`
 * exit with their command's / job's own code instead when it ran.
 */
export const ExitCode = {
  OK: 0,
  /** Something unexpected; run again with --debug for the stack trace. */
  FAILURE: 1,
  /** Bad command line or bad input (arguments, task data, patterns, config, job file). */
  USAGE: 2,
  /** ZooKeeper could not be reached, or the connection was lost. */
  UNREACHABLE: 3,
  /** Authentication failed or the credentials may not touch that node. */
  AUTH: 4,
  /** No such task, world, node or file. */
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
  /** Interrupted by SIGINT/SIGTERM. */
  INTERRUPTED: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The codes a child process ends with by the shell's conventions, which `lock` (its command)
 * and `submit --wait` (its job) pass on as their own exit code.
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
