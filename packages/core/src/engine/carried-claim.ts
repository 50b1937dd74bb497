import type { Op } from '../contract/coordinator.js';
import type { Claim } from './types.js';

// The shape the settle path carries a hand-off in, defined here so that the group commit
// (engine) names no part of the claim path: claim/hand-off.ts makes them, the engine only
// appends their ops to a completion's multi and tells them what became of it.

/**
 * A hand-off: the claim of a child that a completion makes runnable, written in the
 * completion's own multi. Without it the child waits for the completion's reply, then for a
 * claim multi of its own: one more transaction in series, on a server that is busiest
 * exactly when trees run. With it the child starts the moment its parent's completion is
 * committed, in the slot its parent leaves.
 *
 * The claim is the one a claim call would write (the entry's `set @version`, the ephemeral
 * working node, the ancestors' checks), so it is fenced the same way; a multi is all or
 * nothing, so the parent's completion and the child's claim both happen or neither does.
 */
export interface HandOff {
  /** The claim's ops, to be appended to the completion's multi. */
  readonly ops: readonly Op[];
  /**
   * The engine clock's reading the claim was stamped with (the child's `startedAt`). The
   * parent's `completedAt` is stamped with it too: one multi commits both, and two readings
   * would put the child's start before its parent's completion.
   */
  readonly at: number;
  /**
   * What became of the multi that carried `ops`: `true` applied, `false` refused or never
   * sent (the parent is completed on its own, the child is claimed the usual way), `unknown`
   * its reply was lost (the claim is looked up). MUST be called exactly once per hand-off on
   * every path; later calls are ignored, so a `finally` may call it to be sure.
   */
  settle(applied: boolean | 'unknown'): void;
  /** The child's claim once `settle` has run: `null` when it was not claimed. */
  readonly result: Promise<Claim | null>;
}
