import type { Coordinator } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { watchForCancel } from './cancel-watch.js';
import type { EngineContext } from './context.js';
import { resultReaders } from './parent-results.js';
import { type ProgressReporter, progressReporter } from './progress.js';
import type { Claim, EngineClock } from './types.js';
import type { TaskContext, TaskHandler } from './worker-types.js';

/** What the worker knows about one running claim; the run sets `cancelled`. */
export interface RunState {
  claim: Claim;
  abort: AbortController;
  /** Set when the claim is void (session lost): the outcome is not written. */
  void: boolean;
  /** Set when the worker stops hard: the claim is given back, not failed. */
  release: boolean;
  /** Set when the task was cancelled while it ran: whatever it returns is not recorded. */
  cancelled: boolean;
}

/** Where a handler runs: the worker's id, session, clock and engine context. */
export interface RunPlace {
  worker: string;
  coordinator: Coordinator;
  clock: EngineClock;
  cancelWatchAfterMs: number;
  context: () => Promise<EngineContext>;
}

/** How a handler ended, and its final report when it completed (see `completion`). */
export interface HandlerEnd {
  ok: boolean;
  value: unknown;
  final: Awaited<ReturnType<ProgressReporter['finish']>>;
}

/**
 * Runs a claim's handler with its context, watched for a cancel (which aborts its signal).
 * After it: a completion takes its last report along (the node goes with the completion
 * multi), a failed attempt's last lines are written out, a cancelled, lost or released
 * claim writes nothing more.
 */
export async function runHandler(
  handler: TaskHandler,
  r: RunState,
  place: RunPlace,
): Promise<HandlerEnd> {
  const { claim } = r;
  const reporter = progressReporter(await place.context(), claim);
  const ctx = taskContext(claim, r.abort.signal, place.worker, place.context, reporter);
  const ended = new AbortController();
  const { coordinator, clock, cancelWatchAfterMs } = place;
  watchForCancel(coordinator, claim, clock, cancelWatchAfterMs, ended.signal, () => {
    r.cancelled = true;
    r.abort.abort(new ZoottError('ABORTED', 'the task was cancelled'));
  });
  let ok = false;
  let value: unknown;
  try {
    value = await handler(ctx);
    ok = true;
  } catch (err) {
    value = err;
  } finally {
    ended.abort();
  }
  const live = !r.cancelled && !r.void && !r.release;
  const final = live && ok ? await reporter.finish() : null;
  if (live && !ok) await reporter.flush();
  else if (!live) reporter.close();
  return { ok, value, final };
}

/**
 * What a handler gets for one claim: the task, its signal, the reads of its ancestors'
 * results and its progress reporter.
 */
export function taskContext(
  claim: Claim,
  signal: AbortSignal,
  worker: string,
  context: () => Promise<EngineContext>,
  reporter: ProgressReporter,
): TaskContext {
  const ctx: TaskContext = {
    key: claim.key,
    name: claim.name,
    type: claim.type,
    data: claim.data,
    attempt: claim.attempt,
    maxAttempts: claim.maxAttempts,
    signal,
    worker,
    ...resultReaders(context, claim.key),
    progress: (value) => reporter.progress(value),
    log: (line) => reporter.log(line),
  };
  if (claim.hints) ctx.hints = claim.hints;
  return ctx;
}
