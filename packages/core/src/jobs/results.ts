import { ZoottError } from '../contract/errors.js';
import { utf8 } from '../contract/paths.js';
import {
  capOutput,
  DEFAULT_MAX_RESULT_BYTES,
  jsonStringBytes,
  truncateToJsonBytes,
} from './output.js';
import type {
  ProcessRecord,
  RaceJob,
  RaceJobResult,
  RegularJob,
  RegularJobResult,
} from './types.js';

/** What the process runner observed; the result builders turn it into a result JSON. */
export interface ProcessRun {
  stdout: string;
  stderr: string;
  /** Host the process ran on. */
  server: string;
  /** 0 when the process never started. */
  pid: number;
  /**
   * Exit code of a process that ended normally. A runner may keep a shell's code (127, 126)
   * for one that never started (`pid` 0, `error` set): results leave it out.
   */
  exit?: number | null;
  /** Number of the signal that killed the process; wins over `exit` when both are set. */
  signal?: number | null;
  started: Date;
  finished: Date;
  /** The runner already dropped output beyond its capture cap. */
  truncated?: boolean;
  timedOut?: boolean;
  /** Why the process never started (then there is no exit code and no signal). */
  error?: string;
}

/** Options of the result builders: the size cap of the whole result JSON. */
export interface ResultOptions {
  /** Cap on the UTF-8 size of the whole result JSON (default 256 KiB). */
  maxBytes?: number;
}

/**
 * Result times are ISO 8601 in UTC with milliseconds (`2015-11-01T23:22:11.123Z`), not the
 * seed's `YYYY-MM-DD HH:MM:SS`: that form has no time zone and only whole seconds, while
 * ISO 8601 is unambiguous, sorts as text, and `new Date()` parses it back.
 */
export function formatJobTime(date: Date): string {
  if (!(date instanceof Date) || Number.isNaN(date.getTime()))
    throw new ZoottError('BAD_ARGUMENTS', `not a valid time: ${String(date)}`, { field: 'time' });
  return date.toISOString();
}

/** Room kept for `"truncated":true` when measuring what is left for output. */
const TRUNCATED_FLAG_BYTES = ',"truncated":true'.length;

const jsonBytes = (value: unknown): number => utf8.encode(JSON.stringify(value)).length;

function termination(run: ProcessRun): { exit: number } | { signal: number } | object {
  // Never started (no pid): no process ended, so neither an exit code nor a signal, whatever
  // code a runner keeps for itself (a shell's 127/126); the error says why.
  if (run.error !== undefined && run.pid === 0) return {};
  if (typeof run.signal === 'number') return { signal: run.signal };
  if (typeof run.exit === 'number') return { exit: run.exit };
  throw new ZoottError(
    'BAD_ARGUMENTS',
    'a process run needs an exit code, a signal, or the error that kept it from starting',
    { field: 'exit' },
  );
}

/**
 * A process record with stdin/stdout/stderr shortened so that `frame(record)` fits in
 * `maxBytes`. stdout and stderr share the budget first; stdin, which the producer already
 * has, gets what is left.
 */
function fitRecord<T>(
  run: ProcessRun,
  stdin: string,
  maxBytes: number,
  frame: (record: ProcessRecord) => T,
): T {
  const record = {
    stdin: '',
    stdout: '',
    stderr: '',
    server: run.server,
    pid: run.pid,
    ...termination(run),
    started: formatJobTime(run.started),
    finished: formatJobTime(run.finished),
    ...(run.timedOut ? { timedOut: true as const } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
  } as ProcessRecord;
  const fixed = jsonBytes(frame(record)) + TRUNCATED_FLAG_BYTES;
  const room = maxBytes - fixed;
  if (room < 0)
    throw new ZoottError(
      'DATA_TOO_LARGE',
      `the result without any output already takes ${fixed} bytes, more than the cap of ${maxBytes}`,
    );
  const capped = capOutput(run.stdout, run.stderr, room);
  const used = jsonStringBytes(capped.stdout) + jsonStringBytes(capped.stderr);
  const keptStdin = truncateToJsonBytes(stdin, room - used);
  record.stdout = capped.stdout;
  record.stderr = capped.stderr;
  record.stdin = keptStdin;
  if (run.truncated || capped.truncated || keptStdin.length < stdin.length) record.truncated = true;
  return frame(record);
}

/**
 * The result JSON of a regular job: every property of the job (custom ones included),
 * with `server` replaced by the host it ran on, and the run's stdin, stdout, stderr, pid,
 * exit or signal, started, finished (and `truncated`, `timedOut`, `error` when they apply).
 * Output is shortened, beginning kept, so the JSON stays within `maxBytes`.
 */
export function buildRegularResult(
  job: RegularJob,
  run: ProcessRun,
  options: ResultOptions = {},
): RegularJobResult {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const { stdin = '', ...rest } = job;
  return fitRecord(run, stdin, maxBytes, (record) => ({
    ...rest,
    arguments: job.arguments ?? [],
    ...record,
  })) as RegularJobResult;
}

/** One racer's run, as `buildRaceResult` takes it. */
export interface RaceRun {
  /** The racer that won (its stdin is the racer's `data`), or `null`. */
  winner: (ProcessRun & { stdin: string }) | null;
  processes: number;
  started: Date;
  finished: Date;
}

/**
 * The result JSON of a race job: its properties except `input`, the winner's record (or
 * `null`), the number of processes started, and the race's start and end. The winner's
 * output is shortened to keep the JSON within `maxBytes`.
 */
export function buildRaceResult(
  job: RaceJob,
  race: RaceRun,
  options: ResultOptions = {},
): RaceJobResult {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const { input: _input, ...rest } = job;
  const frame = (winner: ProcessRecord | null): RaceJobResult => ({
    ...rest,
    arguments: job.arguments ?? [],
    winner,
    processes: race.processes,
    started: formatJobTime(race.started),
    finished: formatJobTime(race.finished),
  });
  if (race.winner === null) return frame(null);
  return fitRecord(race.winner, race.winner.stdin, maxBytes, frame);
}
