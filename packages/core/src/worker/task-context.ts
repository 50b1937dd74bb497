import { ZoottError } from '../contract/errors.js';
import type { EngineContext } from '../engine/context.js';
import { resultReaders } from '../engine/parent-results.js';
import { type ProgressReporter, progressReporter } from '../engine/progress.js';
import type { Telemetry } from '../engine/telemetry.js';
import type { Claim } from '../engine/types.js';
import type { CancelWatcher } from './cancel-watch.js';
import type { TaskContext, TaskHandler } from './worker-types.js';

/**
 * A handler's abort controller, made only when the handler asks for its signal: most never
 * do, and a controller (its signal an EventTarget) per task is a noticeable share of a busy
 * worker's CPU and garbage. An abort before that is kept and handed to the controller then.
 */
export class LazyAbort {
  private controller: AbortController | null = null;
  private aborted = false;
  private reason: unknown;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** What the worker knows about one running claim; the run sets `cancelled`. */
export interface RunState {
  claim: Claim;
  abort: LazyAbort;
  /** Set when the claim is void (session lost): the outcome is not written. */
  void: boolean;
  /** Set when the worker stops hard: the claim is given back, not failed. */
  release: boolean;
  /** Set when the task was cancelled while it ran: whatever it returns is not recorded. */
  cancelled: boolean;
}

/** Where a handler runs: the worker's id, its cancel watcher and engine context. */
export interface RunPlace {
  worker: string;
  cancels: CancelWatcher;
  context: () => Promise<EngineContext>;
  /** The context's telemetry once the first run looked (`null`: none); see `runAttempt`. */
  telemetry?: Telemetry | null;
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
  const ctx = taskContext(claim, r.abort, place.worker, place.context, reporter);
  const watch = place.cancels.watch(claim, () => {
    r.cancelled = true;
    r.abort.abort(new ZoottError('ABORTED', 'the task was cancelled'));
  });
  let ok = false;
  let value: unknown;
  try {
    value = handler(ctx);
    // A handler that returns at once (no promise) costs no promise and no turn to wait for.
    if (isThenable(value)) value = await value;
    ok = true;
  } catch (err) {
    value = err;
  } finally {
    watch.end();
  }
  const live = !r.cancelled && !r.void && !r.release;
  const final = live && ok ? await reporter.finish() : null;
  if (live && !ok) await reporter.flush();
  else if (!live) reporter.close();
  return { ok, value, final };
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === 'object' || typeof v === 'function') &&
    v !== null &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

/**
 * What a handler gets for one claim: the task, its signal, the reads of its ancestors'
 * results and its progress reporter.
 */
export function taskContext(
  claim: Claim,
  abort: LazyAbort,
  worker: string,
  context: () => Promise<EngineContext>,
  reporter: ProgressReporter,
): TaskContext {
  const readers = resultReaders(context, claim.key);
  // Properties named one by one (no spread of the readers): built once per task.
  const ctx: TaskContext = {
    key: claim.key,
    name: claim.name,
    type: claim.type,
    data: claim.data,
    attempt: claim.attempt,
    maxAttempts: claim.maxAttempts,
    // Made on first use (see LazyAbort).
    get signal() {
      return abort.signal;
    },
    worker,
    parentResult: readers.parentResult,
    ancestorResults: readers.ancestorResults,
    progress: (value) => reporter.progress(value),
    log: (line) => reporter.log(line),
  };
  if (claim.hints) ctx.hints = claim.hints;
  return ctx;
}
