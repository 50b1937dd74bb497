import { ZoottError } from '../contract/errors.js';
import type { EngineContext } from '../engine/context.js';
import { type ResultReaders, resultReaders } from '../engine/parent-results.js';
import { type ProgressReporter, progressReporter } from '../engine/progress.js';
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
  /** The context when it has been read (see `Engine.contextNow`): a run then waits for none. */
  contextNow: () => EngineContext | null;
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
  runState: RunState,
  place: RunPlace,
  engineContext: EngineContext,
): Promise<HandlerEnd> {
  const { claim } = runState;
  const reporter = progressReporter(engineContext, claim);
  const ctx = taskContext(claim, runState.abort, place.worker, place.context, reporter);
  const watch = place.cancels.watch(claim, () => {
    runState.cancelled = true;
    runState.abort.abort(new ZoottError('ABORTED', 'the task was cancelled'));
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
  const live = !runState.cancelled && !runState.void && !runState.release;
  // Most handlers report nothing: no promise to wait for then.
  const final = live && ok && !reporter.idle ? await reporter.finish() : null;
  if (live && !ok) await reporter.flush();
  else if (!live) reporter.close();
  return { ok, value, final };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
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
  return new RunContext(claim, abort, worker, context, reporter) as unknown as TaskContext;
}

/**
 * One object per task with its functions on the prototype: every task gets a context and
 * most handlers use none of its functions, so none is made until one is asked for. Each
 * getter hands out a function bound to this task, so `const { progress } = ctx` works as
 * with plain properties.
 */
class RunContext {
  readonly key: Claim['key'];
  readonly name: string;
  readonly type: string;
  readonly data: unknown;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly worker: string;
  hints?: Claim['hints'];

  // Private in the language, not only in the types: a handler that logs, serialises or spreads
  // its context sees the task's fields, never the engine's objects behind it.
  readonly #abort: LazyAbort;
  readonly #context: () => Promise<EngineContext>;
  readonly #reporter: ProgressReporter;

  constructor(
    claim: Claim,
    abort: LazyAbort,
    worker: string,
    context: () => Promise<EngineContext>,
    reporter: ProgressReporter,
  ) {
    this.#abort = abort;
    this.#context = context;
    this.#reporter = reporter;
    this.key = claim.key;
    this.name = claim.name;
    this.type = claim.type;
    this.data = claim.data;
    this.attempt = claim.attempt;
    this.maxAttempts = claim.maxAttempts;
    this.worker = worker;
    if (claim.hints) this.hints = claim.hints;
  }

  /** Made on first use (see LazyAbort). */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get progress(): (value: unknown) => void {
    const reporter = this.#reporter;
    return (value) => reporter.progress(value);
  }

  get log(): (line: string) => void {
    const reporter = this.#reporter;
    return (line) => reporter.log(line);
  }

  get parentResult(): ResultReaders['parentResult'] {
    return resultReaders(this.#context, this.key).parentResult;
  }

  get ancestorResults(): ResultReaders['ancestorResults'] {
    return resultReaders(this.#context, this.key).ancestorResults;
  }
}
