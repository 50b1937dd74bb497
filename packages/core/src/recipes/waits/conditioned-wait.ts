import type { Coordinator, SessionEvent } from '../../contract/coordinator.js';
import { Deadline, ONE_YEAR_MS, timeoutOrDefault, waitForSignal } from '../support/deadline.js';
import { Signal } from '../support/signal.js';
import { WaitTimeout } from './wait-timeout.js';

/** Options shared by the conditioned waits. */
export interface WaitOptions {
  /**
   * How long to wait, in milliseconds. Missing means "a long time" (one year, as zkutil);
   * zero or negative checks the condition once.
   */
  timeoutMs?: number;
}

/** One look at the condition: `{ done: true, value }` when it holds, `{ done: false }` to keep waiting. */
export type Probe<T> = (watch: () => void) => Promise<{ done: true; value: T } | { done: false }>;

// Session changes that make a re-check useful: on `lost`/`closed` the re-check fails with the
// session's error (SESSION_EXPIRED, CLOSED) instead of waiting out the timeout; `reconnected`
// is harmless. `suspended` is not one: requests would fail although the session may recover.
const RECHECK_ON: ReadonlySet<SessionEvent['type']> = new Set(['lost', 'closed', 'reconnected']);

/**
 * The loop behind zkutil's conditioned getters: probe (arming a watch), and if the condition
 * does not hold yet, sleep until the watch or a session change fires, then probe again.
 */
export async function conditionedWait<T>(
  zk: Coordinator,
  path: string,
  what: string,
  options: WaitOptions,
  probe: Probe<T>,
): Promise<T> {
  const timeoutMs = timeoutOrDefault(options.timeoutMs, ONE_YEAR_MS);
  const deadline = new Deadline(timeoutMs);
  let signal = new Signal();
  const off = zk.onSession((event) => {
    if (RECHECK_ON.has(event.type)) signal.fire();
  });
  try {
    for (;;) {
      const mine = new Signal();
      signal = mine;
      const result = await probe(() => mine.fire());
      if (result.done) return result.value;
      if (!(await waitForSignal(mine, deadline))) {
        throw new WaitTimeout(`timed out after ${timeoutMs} ms waiting for ${path} ${what}`, {
          path,
        });
      }
    }
  } finally {
    off();
  }
}
