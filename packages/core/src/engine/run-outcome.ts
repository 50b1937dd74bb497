import type { Coordinator } from '../contract/coordinator.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { Claimer } from './claimer.js';
import type { Engine } from './engine.js';
import { completion, removeLeftProgress } from './progress.js';
import type { HandlerEnd, RunState } from './task-context.js';
import type { Claim, SettleOutcome } from './types.js';
import type { WorkerStats } from './worker-events.js';

/** What a worker wrote when a run ended. */
export interface Written {
  outcome: SettleOutcome;
  /** Why the outcome could not be written (it is then `dropped`). */
  recordError?: unknown;
  /** A child claimed in the completion's own multi, for the slot the run leaves. */
  next: Claim | null;
}

/**
 * Writes the end of run `r`: nothing for a void or cancelled claim (its claim is forgotten),
 * the claim given back for a release, else the completion or the failure. A completion may
 * hand a child to `claimer` (see `hand-off.ts`).
 */
export async function writeOutcome(
  engine: Engine,
  coordinator: Coordinator,
  r: RunState,
  end: HandlerEnd,
  claimer: Claimer | undefined,
  warn: (fields: object, msg: string) => void,
): Promise<Written> {
  const { claim } = r;
  try {
    if (r.void) {
      engine.forget(claim);
      warn({ key: claim.key.join(KEY_SEPARATOR) }, 'result dropped: session lost');
      return { outcome: { status: 'dropped', reason: 'session lost' }, next: null };
    }
    if (r.cancelled) {
      // The cancel removed the claim with the task: nothing is written for it.
      engine.forget(claim, 'cancelled');
      return { outcome: { status: 'dropped', reason: 'cancelled' }, next: null };
    }
    if (r.release) return { outcome: await engine.release(claim), next: null };
    if (!end.ok) return { outcome: await engine.fail(claim, end.value), next: null };
    const { final } = end;
    const done = await engine.completeHandingOff(claim, end.value, completion(final), claimer);
    const outcome = await removeLeftProgress(coordinator, final, done.outcome);
    return { outcome, next: done.next };
  } catch (err) {
    warn({ key: claim.key.join(KEY_SEPARATOR), err: String(err) }, 'could not record the outcome');
    return { outcome: { status: 'dropped', reason: String(err) }, recordError: err, next: null };
  }
}

/** Counts a written outcome in the worker's stats. */
export function countOutcome(stats: WorkerStats, outcome: SettleOutcome, released: boolean): void {
  if (outcome.status === 'completed') stats.completed++;
  else if (outcome.status === 'retrying') stats.retried++;
  else if (outcome.status === 'failed') stats.failed++;
  else if (!released) stats.dropped++;
}
