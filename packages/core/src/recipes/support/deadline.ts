import { ZoottError } from '../../contract/errors.js';
import type { Signal } from './signal.js';

/** What a missing timeout means for the waiting recipes: "wait a long time", as zkutil does. */
export const ONE_YEAR_MS = 365 * 86_400 * 1000;

// setTimeout fires at once for delays above 2^31-1 ms (~24.8 days), so long waits are chained.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A point in time a recipe must give up at. */
export class Deadline {
  readonly at: number;

  constructor(timeoutMs: number) {
    this.at = Date.now() + timeoutMs;
  }

  remainingMs(): number {
    return this.at - Date.now();
  }

  get expired(): boolean {
    return this.remainingMs() <= 0;
  }
}

/**
 * Checks a caller's timeout (milliseconds). `undefined`/`null` become `fallbackMs`; a
 * negative value is allowed (it means "try once"); NaN or a non-number is rejected.
 */
export function timeoutOrDefault(
  timeoutMs: number | null | undefined,
  fallbackMs: number,
  field = 'timeoutMs',
): number {
  if (timeoutMs === undefined || timeoutMs === null) return fallbackMs;
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs)) {
    throw new ZoottError(
      'BAD_ARGUMENTS',
      `${field} must be a number of milliseconds, got ${JSON.stringify(timeoutMs)}`,
      { field },
    );
  }
  return timeoutMs;
}

/**
 * Waits until `signal` fires (resolves `true`) or the deadline passes (resolves `false`).
 * A signal that already fired wins even when the deadline has passed, so a ready condition
 * is always re-checked once more before a timeout is reported.
 */
export function waitForSignal(signal: Signal, deadline: Deadline): Promise<boolean> {
  if (signal.fired) return Promise.resolve(true);
  if (deadline.expired) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      const left = deadline.remainingMs();
      if (left <= 0) {
        resolve(signal.fired);
        return;
      }
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    };
    signal.wait().then(() => {
      clearTimeout(timer);
      resolve(true);
    });
    arm();
  });
}
