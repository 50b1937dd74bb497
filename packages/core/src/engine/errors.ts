import { type ErrorCode, isZoottError, ZoottError } from '../contract/errors.js';
import type { TaskError } from './types.js';

/** The shared error code of `err`, or `undefined` for anything that is not a ZoottError. */
export function codeOf(err: unknown): ErrorCode | undefined {
  return isZoottError(err) ? err.code : undefined;
}

/** For a failed multi: the index and code of the op that failed. */
export function multiFailure(err: unknown): { index: number; code: ErrorCode } | null {
  if (!isZoottError(err)) return null;
  if (err.opIndex !== undefined) return { index: err.opIndex, code: err.code };
  const index = err.opCodes?.findIndex((c) => c !== null && c !== undefined) ?? -1;
  return { index, code: err.code };
}

/** Codes after which a write may or may not have been applied: its reply was lost. */
export const UNKNOWN_OUTCOME_CODES: ReadonlySet<string> = new Set([
  'CONNECTION_LOSS',
  'OPERATION_TIMEOUT',
]);

/** The code of a failure whose thrown value carried none of its own. */
export const UNCODED_ERROR = 'HANDLER_ERROR';

/** A thrown value's own code: a non-empty string or a number, else {@link UNCODED_ERROR}. */
function ownCode(err: object): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code !== '') return code;
  if (typeof code === 'number' && Number.isFinite(code)) return String(code);
  return UNCODED_ERROR;
}

/** A thrown value as a JSON-safe error record, with the message capped for node size. */
export function toTaskError(err: unknown, maxChars = 16_384): TaskError {
  const cap = (s: string) => (s.length > maxChars ? `${s.slice(0, maxChars)}...[truncated]` : s);
  if (err instanceof Error) {
    const out: TaskError = { code: ownCode(err), message: cap(err.message) };
    if (err.stack) out.stack = cap(err.stack);
    return out;
  }
  if (typeof err === 'object' && err !== null && typeof (err as TaskError).message === 'string')
    return { code: ownCode(err), message: cap((err as TaskError).message) };
  return { code: UNCODED_ERROR, message: cap(String(err)) };
}

/**
 * A stored error as read back: records written before every error had a code (or by another
 * writer) get {@link UNCODED_ERROR}, so readers always see `{ code, message }`.
 */
export function readTaskError(stored: unknown): TaskError | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const error = stored as Partial<TaskError>;
  const out: TaskError = {
    code: typeof error.code === 'string' && error.code !== '' ? error.code : UNCODED_ERROR,
    message: typeof error.message === 'string' ? error.message : String(error.message),
  };
  if (typeof error.stack === 'string') out.stack = error.stack;
  return out;
}

/** A ZoottError for a task that is not in the right state for an operation. */
export function taskStateError(key: readonly string[], why: string, op: string): ZoottError {
  return new ZoottError('TASK_STATE', `task ${key.join('|')}: ${why}`, { op });
}
