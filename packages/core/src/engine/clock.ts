import type { EngineClock } from './types.js';

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
