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
