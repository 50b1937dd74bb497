import { formatJobTime } from './results.js';

/** Why a job did not run, and who says so. */
export interface JobRefusal {
  /** What kept the job from running, for a person: the `error` field of the result. */
  error: string;
  /** The host that refused it (a worker, or the AMQP bridge): the result's `server`. */
  server: string;
  /** When (`started` and `finished` of the result). Default: now. */
  at?: Date;
}

/** Properties a result sets itself: a job's own copies of them are not echoed. */
const RESULT_FIELDS = new Set([
  'stdin',
  'stdout',
  'stderr',
  'server',
  'pid',
  'exit',
  'signal',
  'started',
  'finished',
  'truncated',
  'timedOut',
  'error',
  'winner',
  'processes',
  'input',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The job's own properties (custom ones included), without what a result sets itself. */
function echoOf(job: unknown): Record<string, unknown> {
  if (!isRecord(job)) return { arguments: [] };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(job)) if (!RESULT_FIELDS.has(key)) out[key] = value;
  const args = job.arguments;
  out.arguments = Array.isArray(args) && args.every((a) => typeof a === 'string') ? [...args] : [];
  return out;
}

/**
 * The result of a regular job that never ran (refused, invalid, failed for good before or
 * without a run): the spec's result fields with an empty run, no `exit` and no `signal`
 * (no process ended), `pid` 0, and `error` saying why. The job's own properties, custom ones
 * and `exchange`/`routingkey` included, are echoed as a result echoes them; its `stdin` is
 * not (nothing was sent: `stdin` is `""`), nor anything a result sets itself.
 */
export function regularErrorResult(job: unknown, refusal: JobRefusal): Record<string, unknown> {
  const at = formatJobTime(refusal.at ?? new Date());
  return {
    ...echoOf(job),
    stdin: '',
    stdout: '',
    stderr: '',
    server: refusal.server,
    pid: 0,
    started: at,
    finished: at,
    error: refusal.error,
  };
}

/**
 * The result of a race that never ran: the race's own properties (not `input`), `winner`
 * `null`, `processes` 0, `started`/`finished`, and `error` saying why.
 */
export function raceErrorResult(job: unknown, refusal: JobRefusal): Record<string, unknown> {
  const at = formatJobTime(refusal.at ?? new Date());
  return {
    ...echoOf(job),
    winner: null,
    processes: 0,
    started: at,
    finished: at,
    error: refusal.error,
  };
}
