import { isZoottError } from '../contract/errors.js';

/**
 * An error that retrying cannot fix (an invalid job, a refused executable): a handler that
 * throws it sends its task to the failed area at once instead of after `maxAttempts`.
 * A `ZoottError` INVALID_JOB, or any error with `permanent: true`, counts as permanent too.
 */
export class PermanentError extends Error {
  readonly permanent = true;
  readonly code: string;
  constructor(message: string, code = 'PERMANENT') {
    super(message);
    this.name = 'PermanentError';
    this.code = code;
  }
}

/** Whether a handler's error should dead-letter its task without further attempts. */
export function isPermanent(err: unknown): boolean {
  if (isZoottError(err, 'INVALID_JOB')) return true;
  return (
    typeof err === 'object' && err !== null && (err as { permanent?: unknown }).permanent === true
  );
}
