import type { Coordinator } from '../contract/coordinator.js';
import { codeOf } from './errors.js';

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
