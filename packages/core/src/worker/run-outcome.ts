import type { Claimer } from '../claim/claimer.js';
import type { Coordinator } from '../contract/coordinator.js';
import type { EngineContext } from '../engine/context.js';
import { completion, removeLeftProgress } from '../engine/progress.js';
import { parentCarrier, runTrace } from '../engine/task-spans.js';
import type { Telemetry } from '../engine/telemetry.js';
import type { Claim, SettleOutcome, TaskError } from '../engine/types.js';
import type { Engine } from '../front/engine.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import { type HandlerEnd, type RunPlace, type RunState, runHandler } from './task-context.js';
import type { WorkerStats } from './worker-events.js';
import type { TaskHandler } from './worker-types.js';

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
  runState: RunState,
  end: HandlerEnd,
  claimer: Claimer | undefined,
  warn: (fields: object, msg: string) => void,
): Promise<Written> {
  const { claim } = runState;
  try {
    if (runState.void) {
      engine.forget(claim);
      warn({ key: claim.key.join(KEY_SEPARATOR) }, 'result dropped: session lost');
      return { outcome: { status: 'dropped', reason: 'session lost' }, next: null };
    }
    if (runState.cancelled) {
      // The cancel removed the claim with the task: nothing is written for it.
      engine.forget(claim, 'cancelled');
      return { outcome: { status: 'dropped', reason: 'cancelled' }, next: null };
    }
    if (runState.release) return { outcome: await engine.release(claim), next: null };
    if (!end.ok) return { outcome: await engine.fail(claim, end.value), next: null };
    const { final } = end;
    const done = await engine.completeHandingOff(claim, end.value, completion(final), claimer);
    // Nearly always the outcome itself, not a promise: no turn spent waiting for it.
    const left = removeLeftProgress(coordinator, final, done.outcome);
    return { outcome: left instanceof Promise ? await left : left, next: done.next };
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

/**
 * Why a handler's result was not stored (too large, not JSON), as the failed record says:
 * `undefined` when it was.
 */
function storeFailure(outcome: SettleOutcome): TaskError | undefined {
  return outcome.status === 'failed' || outcome.status === 'retrying' ? outcome.error : undefined;
}

/**
 * Runs a claim's handler, then `write`s its outcome, in the claim's run span (after its wait
 * span), the handler with that span current: the run of an engine that traces. One that
 * does not runs `runHandler` and `write` itself, without this layer (see the worker).
 */
export async function runTraced(
  handler: TaskHandler,
  runState: RunState,
  place: RunPlace,
  ctx: EngineContext,
  telemetry: Telemetry,
  write: (run: RunState, end: HandlerEnd) => Promise<Written>,
): Promise<{ end: HandlerEnd; written: Written }> {
  const parent = await parentCarrier(ctx, runState.claim.key);
  const trace = runTrace(telemetry, ctx.layout.world, runState.claim, place.worker, parent);
  try {
    const end = await trace.within(() => runHandler(handler, runState, place, ctx));
    const written = await write(runState, end);
    trace.end(written.outcome, end.ok ? storeFailure(written.outcome) : end.value);
    return { end, written };
  } catch (err) {
    trace.end({ status: 'dropped', reason: String(err) }, err);
    throw err;
  }
}
