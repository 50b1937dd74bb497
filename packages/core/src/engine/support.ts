import type { Coordinator } from '../contract/coordinator.js';
import { type ErrorCode, isZoottError, ZoottError } from '../contract/errors.js';
import type { EngineClock, EngineLogger, TaskError } from './types.js';

/** The shared error code of `err`, or `undefined` for anything that is not a ZoottError. */
export function codeOf(err: unknown): ErrorCode | undefined {
  return isZoottError(err) ? err.code : undefined;
}

/** For a failed multi: the index and code of the op that failed. */
export function multiFailure(err: unknown): { index: number; code: ErrorCode } | null {
  if (!isZoottError(err)) return null;
  if (err.opIndex !== undefined) return { index: err.opIndex, code: err.code };
  const i = err.opCodes?.findIndex((c) => c !== null && c !== undefined) ?? -1;
  return { index: i, code: err.code };
}

/** Codes after which a write may or may not have been applied: its reply was lost. */
export const UNKNOWN_OUTCOME_CODES: ReadonlySet<string> = new Set([
  'CONNECTION_LOSS',
  'OPERATION_TIMEOUT',
]);

/**
 * Resolves with `verdict()` as soon as it is not `null`, checking now and on every session
 * event: the way to wait out a dropped connection without timers of its own.
 */
function onceDecided(c: Coordinator, verdict: () => boolean | null): Promise<boolean> {
  const first = verdict();
  if (first !== null) return Promise.resolve(first);
  return new Promise((resolve) => {
    const off = c.onSession(() => {
      const v = verdict();
      if (v === null) return;
      off();
      resolve(v);
    });
  });
}

const gone = (c: Coordinator) => c.state === 'lost' || c.state === 'closed';

/**
 * Resolves `true` once `session` is connected again, `false` once it is gone (another
 * session, `lost`, `closed`). A connection that comes back inside the session keeps that
 * session's ephemeral nodes (claims) alive.
 */
export function sessionBack(c: Coordinator, session: string): Promise<boolean> {
  return onceDecided(c, () =>
    c.sessionId !== session || gone(c) ? false : c.state === 'connected' ? true : null,
  );
}

/**
 * Resolves `true` once the coordinator is connected (in any session), `false` once it is
 * `lost` or `closed`: for writes that belong to no session (queueing).
 */
export function connectionBack(c: Coordinator): Promise<boolean> {
  return onceDecided(c, () => (c.state === 'connected' ? true : gone(c) ? false : null));
}

const claimsHere = new WeakMap<Coordinator, Set<string>>();

/**
 * Working-node paths that some engine of this process holds through `c`, that is through one
 * session. A working node of the own session missing from it is an orphan (a lost claim reply
 * nobody adopted, a settle that gave up); one present is another engine's live claim.
 */
export function claimsHeldThrough(c: Coordinator): Set<string> {
  let set = claimsHere.get(c);
  if (!set) {
    set = new Set();
    claimsHere.set(c, set);
  }
  return set;
}

/** Creates a persistent node unless it exists; concurrent callers all succeed. */
export async function ensureNode(c: Coordinator, path: string, data?: Uint8Array): Promise<void> {
  try {
    await c.create(path, data);
  } catch (err) {
    if (codeOf(err) !== 'NODE_EXISTS') throw err;
  }
}

/** Wall-clock time, real timers, Math.random. */
export const systemEngineClock: EngineClock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
    });
  },
  random: () => Math.random(),
};

/** Writes warnings and errors to the console; the default when no logger is given. */
export const consoleLogger: EngineLogger = {
  warn: (fields, msg) => console.warn(`[zoott] ${msg}`, fields),
  error: (fields, msg) => console.error(`[zoott] ${msg}`, fields),
};

/**
 * Delay before retry number `attempt` (1 = after the first failure): exponential with full
 * jitter, capped. Full jitter spreads a burst of failures evenly instead of in waves.
 */
export function backoffDelay(
  attempt: number,
  backoff: { baseMs: number; maxMs: number },
  random: () => number,
): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/** A thrown value as a JSON-safe error record, with the message capped for node size. */
export function toTaskError(err: unknown, maxChars = 16_384): TaskError {
  const cap = (s: string) => (s.length > maxChars ? `${s.slice(0, maxChars)}...[truncated]` : s);
  if (err instanceof Error) {
    const out: TaskError = { message: cap(err.message) };
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') out.code = code;
    if (err.stack) out.stack = cap(err.stack);
    return out;
  }
  if (typeof err === 'object' && err !== null && typeof (err as TaskError).message === 'string') {
    const e = err as TaskError;
    return { message: cap(e.message), ...(e.code ? { code: String(e.code) } : {}) };
  }
  return { message: cap(String(err)) };
}

/** A ZoottError for a task that is not in the right state for an operation. */
export function taskStateError(key: readonly string[], why: string, op: string): ZoottError {
  return new ZoottError('TASK_STATE', `task ${key.join('|')}: ${why}`, { op });
}
