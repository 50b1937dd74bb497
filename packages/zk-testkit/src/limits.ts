/**
 * The bounds of the testkit's servers, in one place, so a test can size what must outlast
 * them (a session across a restart) from the bounds themselves instead of a guess.
 */

/** A clean stop() gets this long before the server is killed. */
export const STOP_GRACE_MS = 10_000;

/** start() fails when the server does not answer `ruok` (and `srvr`, if asked) by then. */
export const READY_TIMEOUT_MS = 60_000;

/**
 * The longest a stop() followed by a start() of the same server takes when it does not fail:
 * a session that lasts longer survives every restart that succeeds, however loaded the
 * machine. (A restart that takes longer fails with ZooKeeperStartError instead.)
 */
export const RESTART_BOUND_MS = STOP_GRACE_MS + READY_TIMEOUT_MS;

/**
 * The session timeouts a testkit server accepts: from 2 ticks (ZooKeeper's own minimum) up
 * to 120 ticks, and at least 60 s, so a session can outlast {@link RESTART_BOUND_MS}.
 */
export function sessionTimeoutRange(tickTimeMs: number): { minMs: number; maxMs: number } {
  return { minMs: 2 * tickTimeMs, maxMs: Math.max(120 * tickTimeMs, 2 * RESTART_BOUND_MS) };
}
