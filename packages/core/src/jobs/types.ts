/**
 * Yothalot-style JSON jobs, as zoott reads and writes them. Field names follow the wire
 * format (`routingkey` in lower case, `arguments`, `exit`) so messages stay compatible.
 * Any property zoott does not know is a custom property: carried through untouched and
 * echoed into the result, so producers can tag their jobs.
 */

/** The properties a regular job may set; anything else is custom. */
export interface RegularJobFields {
  /** Absolute path, a path relative to the worker's directory, or a name found on PATH. */
  executable: string;
  /** Command-line arguments (no shell is involved: nothing is expanded). */
  arguments?: string[];
  /** Written to the process's standard input when it starts. */
  stdin?: string;
  /** Placement hint: the host the job would best run on. */
  server?: string;
  /** Placement hint: a file the job processes (prefer a host holding it). */
  filename?: string;
  /** zoott extension, placement hint: a dataset the job reads (prefer a host caching it). */
  dataset?: string;
  /** Where to publish the result (zoott's reply channel). */
  exchange?: string;
  routingkey?: string;
  /** zoott extension: kill the process after this many milliseconds. */
  timeoutMs?: number;
  /**
   * zoott extension: `"stdin"` writes the parent task's result (its completed record's
   * `result`, JSON; `null` when there is none) to the process's standard input.
   */
  parentResult?: 'stdin';
}

/** A validated regular job: its known fields plus custom properties. */
export type RegularJob = RegularJobFields & { [custom: string]: unknown };

/** One racer of a race job: `data` goes to its stdin. */
export interface RaceInput {
  data: string;
  server?: string;
  filename?: string;
}

/** The fields zoott reads from a race job. */
export interface RaceJobFields {
  executable: string;
  arguments?: string[];
  /**
   * One racer per element, or a directory (relative to the shared mount) whose records
   * each start a racer.
   */
  input: RaceInput[] | string;
  exchange?: string;
  routingkey?: string;
  /** zoott extension: end the whole race after this many milliseconds. */
  timeoutMs?: number;
  /**
   * zoott extension: count an exit with a non-zero code as an abnormal end, which wins the
   * race. By default (the spec's rule) any exit code is a normal end, and only output or a
   * signal (or failing to start) wins: a silent `grep` that found nothing (exit 1) loses.
   */
  nonZeroExitWins?: boolean;
}

/** A race job: its fields plus any custom properties, returned untouched. */
export type RaceJob = RaceJobFields & { [custom: string]: unknown };

/**
 * How a process ended: a normal exit code, or the number of the signal that killed it. A
 * process that never started has neither; its `error` says why.
 */
export type Termination =
  | { exit: number; signal?: undefined }
  | { signal: number; exit?: undefined }
  | { exit?: undefined; signal?: undefined; error: string };

/** What one process run produced, as published in a result. Times are ISO 8601 (UTC). */
export type ProcessRecord = {
  stdin: string;
  stdout: string;
  stderr: string;
  /** Host the process ran on (replaces the `server` hint of the job). */
  server: string;
  /** 0 when the process could not be started (then `error` says why). */
  pid: number;
  started: string;
  finished: string;
  /** Present (true) when stdin, stdout or stderr were shortened to fit the result. */
  truncated?: true;
  /** zoott extension: present (true) when the process was killed for exceeding `timeoutMs`. */
  timedOut?: true;
  /**
   * zoott extension: why the process never started (not found, not allowed, could not be
   * executed); it then has no `exit` and no `signal`, and `pid` is 0.
   */
  error?: string;
} & Termination;

/** The result of a regular job: the job's own properties, with the run added. */
export type RegularJobResult = ProcessRecord & {
  executable: string;
  arguments: string[];
  filename?: string;
  exchange?: string;
  routingkey?: string;
  timeoutMs?: number;
  [custom: string]: unknown;
};

/** The result of a race job. `input` is not echoed (it may be large or a directory). */
export interface RaceJobResult {
  executable: string;
  arguments: string[];
  /** The first racer to write output or end abnormally; `null` when every racer lost. */
  winner: ProcessRecord | null;
  /** How many racer processes were started. */
  processes: number;
  started: string;
  finished: string;
  exchange?: string;
  routingkey?: string;
  timeoutMs?: number;
  [custom: string]: unknown;
}
