/**
 * The working nodes (claims) this process holds, per coordinator: the one table in core kept
 * per coordinator instead of per engine, on purpose. A working node belongs to a session, and
 * every engine of this process on that coordinator shares the session. When a claim finds the
 * task's working node made by its own session, only this table tells a live claim of another
 * engine on the same coordinator (busy: leave it) from an orphan of the session (a lost claim
 * reply nobody adopted, a settle that gave up: remove it, or it blocks the task for the
 * session's lifetime). Kept per engine, each engine would take the others' live claims for
 * orphans and delete them. A WeakMap keyed by the coordinator, so it goes with it.
 */
import type { Coordinator } from '../contract/coordinator.js';

const claimsHere = new WeakMap<Coordinator, Set<string>>();

/**
 * Working-node paths that some engine of this process holds through `c`, that is through one
 * session. A working node of the own session missing from it is an orphan; one present is
 * another engine's live claim.
 */
export function claimsHeldThrough(coordinator: Coordinator): Set<string> {
  let set = claimsHere.get(coordinator);
  if (!set) {
    set = new Set();
    claimsHere.set(coordinator, set);
  }
  return set;
}
