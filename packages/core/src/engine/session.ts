import type { Coordinator } from '../contract/coordinator.js';
import { codeOf } from './errors.js';
import type { EngineClock } from './types.js';

/** First and longest wait between two failed `renewSession` calls. */
const RENEW_BASE_MS = 100;
const RENEW_MAX_MS = 5000;

/**
 * Opens a new session after `lost`, retrying with capped exponential backoff: the network
 * may still be down when the loss is noticed, and a worker left without a session would
 * idle forever. Ends when a session is open, or `halt` aborts.
 *
 * The backoff is the least time from one try's start to the next, not a pause after each:
 * a try that spent its time connecting (an adapter keeps trying for its connect timeout) is
 * followed at once, so the session opens when the server is back, not a pause later.
 */
export async function renewUntilOpen(
  coordinator: Coordinator,
  clock: EngineClock,
  halt: AbortSignal,
  warn: (fields: object, msg: string) => void,
): Promise<void> {
  const lost = () => coordinator.state === 'lost';
  for (let delay = RENEW_BASE_MS; !halt.aborted && lost(); ) {
    const began = clock.now();
    const wait = () => Math.max(0, delay - (clock.now() - began));
    try {
      await coordinator.renewSession();
      // A session lost again meanwhile is renewed again, after the wait.
      if (!lost()) return;
    } catch (err) {
      if (halt.aborted) return;
      warn({ err: String(err), retryInMs: wait() }, 'renewSession failed');
    }
    await clock.sleep(wait(), halt);
    delay = Math.min(delay * 2, RENEW_MAX_MS);
  }
}

/**
 * Resolves with `verdict()` as soon as it is not `null`, checking now and on every session
 * event: the way to wait out a dropped connection without timers of its own.
 */
function onceDecided(coordinator: Coordinator, verdict: () => boolean | null): Promise<boolean> {
  const first = verdict();
  if (first !== null) return Promise.resolve(first);
  return new Promise((resolve) => {
    const off = coordinator.onSession(() => {
      const decided = verdict();
      if (decided === null) return;
      off();
      resolve(decided);
    });
  });
}

const gone = (c: Coordinator) => c.state === 'lost' || c.state === 'closed';

/**
 * Resolves `true` once `session` is connected again, `false` once it is gone (another
 * session, `lost`, `closed`). A connection that comes back inside the session keeps that
 * session's ephemeral nodes (claims) alive.
 */
export function sessionBack(coordinator: Coordinator, session: string): Promise<boolean> {
  return onceDecided(coordinator, () =>
    coordinator.sessionId !== session || gone(coordinator)
      ? false
      : coordinator.state === 'connected'
        ? true
        : null,
  );
}

/**
 * Resolves `true` once the coordinator is connected (in any session), `false` once it is
 * `lost` or `closed`: for writes that belong to no session (queueing).
 */
export function connectionBack(coordinator: Coordinator): Promise<boolean> {
  return onceDecided(coordinator, () =>
    coordinator.state === 'connected' ? true : gone(coordinator) ? false : null,
  );
}

/** Creates a persistent node unless it exists; concurrent callers all succeed. */
export async function ensureNode(
  coordinator: Coordinator,
  path: string,
  data?: Uint8Array,
): Promise<void> {
  try {
    await coordinator.create(path, data);
  } catch (err) {
    if (codeOf(err) !== 'NODE_EXISTS') throw err;
  }
}
