import { ZoottError } from '../contract/errors.js';
import { utf8 } from '../contract/paths.js';
import { validateJsonData } from '../tree/names.js';
import { show, typeOf } from '../tree/show.js';
import type { RaceInput, RaceJob, RegularJob } from './types.js';

/** Bounds on job specs. */
export interface JobLimits {
  /** Largest job message accepted by the parsers, in UTF-8 bytes. */
  maxJobBytes: number;
  /** Most command-line arguments. */
  maxArguments: number;
  /**
   * Largest JSON size of what a result echoes back (the job without `stdin` and race
   * `input`), so a result always has room for output under its byte cap.
   */
  maxEchoBytes: number;
  /** Most racers listed in a race job's `input` array. */
  maxRacers: number;
}

/** The limits job validation applies when none are given. */
export const DEFAULT_JOB_LIMITS: Readonly<JobLimits> = Object.freeze({
  maxJobBytes: 1024 * 1024,
  maxArguments: 4096,
  maxEchoBytes: 64 * 1024,
  maxRacers: 10_000,
});

/** Longest timeout `setTimeout` can honour. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Input properties that would clash with what a result adds. */
const RESULT_ONLY = ['stdout', 'stderr', 'pid', 'exit', 'signal', 'started', 'finished'];
const REGULAR_RESERVED = new Set([...RESULT_ONLY, 'truncated', 'timedOut', 'error']);
// `error` is the error result's field (a race that never ran), as it is a regular result's.
const RACE_RESERVED = new Set([
  ...RESULT_ONLY,
  'winner',
  'processes',
  'truncated',
  'timedOut',
  'error',
]);

const REGULAR_KNOWN = new Set([
  'executable',
  'arguments',
  'stdin',
  'server',
  'filename',
  'dataset',
  'exchange',
  'routingkey',
  'timeoutMs',
  'parentResult',
]);
const RACE_KNOWN = new Set([
  'executable',
  'arguments',
  'input',
  'exchange',
  'routingkey',
  'timeoutMs',
  'nonZeroExitWins',
]);
const RACE_INPUT_KNOWN = new Set(['data', 'server', 'filename']);

const bad = (field: string, why: string) =>
  new ZoottError('INVALID_JOB', `${field}: ${why}`, { field });

/**
 * Validates a regular job (already parsed from JSON) and returns a copy. Throws
 * `INVALID_JOB` naming the field: `executable` is required; `arguments` is an array of
 * strings; `stdin`, `server`, `filename`, `dataset`, `exchange`, `routingkey` are strings;
 * `timeoutMs` is a whole number of milliseconds; `parentResult` is `"stdin"` (and excludes
 * `stdin`). Every other property is kept as a custom property,
 * except names a result adds (`stdout`, `exit`, ...), which are rejected as reserved.
 */
export function validateRegularJob(input: unknown, limits?: Partial<JobLimits>): RegularJob {
  const lim = { ...DEFAULT_JOB_LIMITS, ...defined(limits) };
  const obj = asObject(input, 'job');
  const job: Record<string, unknown> = { executable: executable(obj.executable) };
  if (obj.arguments !== undefined) job.arguments = argumentList(obj.arguments, lim);
  if (obj.stdin !== undefined) job.stdin = str(obj.stdin, 'stdin', true);
  for (const key of ['server', 'filename', 'dataset', 'exchange', 'routingkey'] as const) {
    if (obj[key] !== undefined) job[key] = str(obj[key], key);
  }
  if (obj.timeoutMs !== undefined) job.timeoutMs = timeout(obj.timeoutMs);
  if (obj.parentResult !== undefined) job.parentResult = parentResult(obj);
  copyCustom(obj, job, REGULAR_KNOWN, REGULAR_RESERVED);
  const { stdin: _stdin, ...echoed } = job;
  checkEcho(echoed, lim);
  return job as RegularJob;
}

/** `parentResult`: only `"stdin"`, and not together with a `stdin` of the job's own. */
function parentResult(obj: Record<string, unknown>): 'stdin' {
  if (obj.parentResult !== 'stdin')
    throw bad(
      'parentResult',
      `must be "stdin" (the parent task's result JSON on standard input), got ${show(obj.parentResult)}`,
    );
  if (obj.stdin !== undefined)
    throw bad('parentResult', 'cannot be combined with stdin: the parent result is the input');
  return 'stdin';
}

/**
 * Validates a race job and returns a copy. Like {@link validateRegularJob}, plus `input`:
 * a non-empty array of `{data, server?, filename?}` (`data` is the racer's stdin; other
 * keys are rejected, so a misspelt `data` is caught) or a relative directory path, and
 * `nonZeroExitWins` (a boolean).
 */
export function validateRaceJob(input: unknown, limits?: Partial<JobLimits>): RaceJob {
  const lim = { ...DEFAULT_JOB_LIMITS, ...defined(limits) };
  const obj = asObject(input, 'job');
  const job: Record<string, unknown> = { executable: executable(obj.executable) };
  if (obj.arguments !== undefined) job.arguments = argumentList(obj.arguments, lim);
  job.input = raceInput(obj.input, lim);
  for (const key of ['exchange', 'routingkey'] as const) {
    if (obj[key] !== undefined) job[key] = str(obj[key], key);
  }
  if (obj.timeoutMs !== undefined) job.timeoutMs = timeout(obj.timeoutMs);
  if (obj.nonZeroExitWins !== undefined) {
    if (typeof obj.nonZeroExitWins !== 'boolean')
      throw bad('nonZeroExitWins', `must be true or false, got ${typeOf(obj.nonZeroExitWins)}`);
    job.nonZeroExitWins = obj.nonZeroExitWins;
  }
  copyCustom(obj, job, RACE_KNOWN, RACE_RESERVED);
  const { input: _input, ...echoed } = job;
  checkEcho(echoed, lim);
  return job as RaceJob;
}

/** Parses a JSON job message (text or node data) and validates it as a regular job. */
export function parseRegularJob(
  message: string | Uint8Array,
  limits?: Partial<JobLimits>,
): RegularJob {
  return validateRegularJob(parseMessage(message, limits), limits);
}

/** Parses a JSON job message (text or node data) and validates it as a race job. */
export function parseRaceJob(message: string | Uint8Array, limits?: Partial<JobLimits>): RaceJob {
  return validateRaceJob(parseMessage(message, limits), limits);
}

/** The custom properties of a job: everything that is not one of its kind's known fields. */
export function customProperties(
  job: RegularJob | RaceJob,
  kind: 'regular' | 'race',
): Record<string, unknown> {
  const known = kind === 'race' ? RACE_KNOWN : REGULAR_KNOWN;
  return Object.fromEntries(Object.entries(job).filter(([k]) => !known.has(k)));
}

function parseMessage(message: string | Uint8Array, limits?: Partial<JobLimits>): unknown {
  const lim = { ...DEFAULT_JOB_LIMITS, ...defined(limits) };
  let text: string;
  if (typeof message === 'string') text = message;
  else if (message instanceof Uint8Array) text = utf8.decode(message);
  else throw bad('job', `must be JSON text or bytes, got ${typeOf(message)}`);
  const bytes = typeof message === 'string' ? utf8.encode(message).length : message.length;
  if (bytes > lim.maxJobBytes)
    throw bad('job', `message is ${bytes} bytes, more than the limit of ${lim.maxJobBytes}`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ZoottError('INVALID_JOB', `job: not valid JSON (${(err as Error).message})`, {
      field: 'job',
      cause: err,
    });
  }
}

function asObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bad(field, `must be a JSON object, got ${typeOf(value)}`);
  return value as Record<string, unknown>;
}

function executable(value: unknown): string {
  if (value === undefined) throw bad('executable', 'is required');
  const text = str(value, 'executable');
  if (text.trim().length === 0) throw bad('executable', 'must not be empty');
  if (text.length > 4096)
    throw bad('executable', `must be at most 4096 characters, got ${text.length}`);
  return text;
}

function argumentList(value: unknown, lim: JobLimits): string[] {
  if (!Array.isArray(value))
    throw bad('arguments', `must be an array of strings, got ${typeOf(value)}`);
  if (value.length > lim.maxArguments)
    throw bad(
      'arguments',
      `has ${value.length} entries, more than the limit of ${lim.maxArguments}`,
    );
  return value.map((a, i) => str(a, `arguments[${i}]`));
}

/**
 * A string field. NUL cannot travel through argv, environment or most protocols, so only
 * stdin data (`allowNul`) may hold it.
 */
function str(value: unknown, field: string, allowNul = false): string {
  if (typeof value !== 'string') throw bad(field, `must be a string, got ${typeOf(value)}`);
  if (!allowNul && value.includes('\u0000')) throw bad(field, 'must not contain NUL characters');
  return value;
}

function timeout(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_MS)
    throw bad(
      'timeoutMs',
      `must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${show(value)}`,
    );
  return value;
}

function raceInput(value: unknown, lim: JobLimits): RaceInput[] | string {
  if (value === undefined)
    throw bad('input', 'is required (an array of {data} or a directory path)');
  if (typeof value === 'string') {
    if (value.length === 0) throw bad('input', 'directory path must not be empty');
    if (value.startsWith('/'))
      throw bad('input', 'directory path must be relative to the shared mount, not absolute');
    if (value.split('/').includes('..')) throw bad('input', "directory path must not contain '..'");
    if (value.includes('\u0000')) throw bad('input', 'must not contain NUL characters');
    return value;
  }
  if (!Array.isArray(value))
    throw bad(
      'input',
      `must be an array of {data, server?, filename?} or a directory path, got ${typeOf(value)}`,
    );
  if (value.length === 0) throw bad('input', 'must list at least one racer');
  if (value.length > lim.maxRacers)
    throw bad('input', `lists ${value.length} racers, more than the limit of ${lim.maxRacers}`);
  return value.map((entry, index) => {
    const where = `input[${index}]`;
    const obj = asObject(entry, where);
    for (const key of Object.keys(obj)) {
      if (!RACE_INPUT_KNOWN.has(key))
        throw bad(`${where}.${key}`, 'unknown racer property (allowed: data, server, filename)');
    }
    if (obj.data === undefined) throw bad(`${where}.data`, "is required (the racer's stdin)");
    const racer: RaceInput = { data: str(obj.data, `${where}.data`, true) };
    if (obj.server !== undefined) racer.server = str(obj.server, `${where}.server`);
    if (obj.filename !== undefined) racer.filename = str(obj.filename, `${where}.filename`);
    return racer;
  });
}

/** Copies custom properties (JSON values), refusing reserved names and `__proto__`. */
function copyCustom(
  from: Record<string, unknown>,
  to: Record<string, unknown>,
  known: ReadonlySet<string>,
  reserved: ReadonlySet<string>,
): void {
  for (const [key, value] of Object.entries(from)) {
    if (known.has(key) || value === undefined) continue;
    if (reserved.has(key)) throw bad(key, 'is reserved for the result and cannot be set on a job');
    if (key === '__proto__') throw bad(key, 'is not allowed as a property name');
    validateJsonData(value, Number.POSITIVE_INFINITY, key, 'INVALID_JOB');
    to[key] = value;
  }
}

function checkEcho(echoed: Record<string, unknown>, lim: JobLimits): void {
  const bytes = utf8.encode(JSON.stringify(echoed)).length;
  if (bytes > lim.maxEchoBytes)
    throw bad(
      'job',
      `its properties other than stdin/input take ${bytes} bytes of JSON, more than the limit of ${lim.maxEchoBytes} (they are echoed into the result)`,
    );
}

function defined<T extends object>(partial: Partial<T> | undefined): Partial<T> {
  if (!partial) return {};
  return Object.fromEntries(
    Object.entries(partial).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}
