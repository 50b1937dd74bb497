import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { completedRecord } from './parent-results.js';
import type { Telemetry, TelemetryAttributes, TelemetrySpan, TraceCarrier } from './telemetry.js';
import type { Claim, SettleOutcome } from './types.js';

/**
 * The spans of a task, made through a {@link Telemetry} (docs/tracing.md):
 *
 * - `queue <type>` (producer), around the write that queues it, under the caller's context.
 *   The task stores that span's context (a carrier in its entry), so what a worker does for
 *   it continues the producer's trace.
 * - `wait <type>`, from when the task became claimable (queued, or its retry's backoff over)
 *   to its claim; recorded when the claim is traced (a worker's run, or a settle).
 * - `run <type>` (consumer), a worker's run of one attempt: the handler runs inside it, so its
 *   own spans and the tasks it queues nest under it; it ends once the outcome is written.
 * - `settle <type>`, around the write that ends an attempt (complete, fail, release).
 *
 * The parent of wait and run is the task's stored context; a task stored without one (queued
 * by a producer that traces nothing) joins its parent task's trace, read from the parent's
 * completed record, and a top-level one starts a trace of its own at its wait span. A child
 * that stores a context of its own gets a link to its parent's run besides.
 */

/** Attribute names, shared by every span of a task. */
export const SPAN_ATTRIBUTES = {
  system: 'messaging.system',
  operation: 'messaging.operation.type',
  world: 'zoott.world',
  type: 'zoott.task.type',
  key: 'zoott.task.key',
  attempt: 'zoott.task.attempt',
  worker: 'zoott.worker',
  outcome: 'zoott.task.outcome',
  settle: 'zoott.settle.op',
} as const;

function taskAttributes(
  world: string,
  key: TaskKey,
  type: string,
  operation: string,
): TelemetryAttributes {
  return {
    [SPAN_ATTRIBUTES.system]: 'zoott',
    [SPAN_ATTRIBUTES.operation]: operation,
    [SPAN_ATTRIBUTES.world]: world,
    [SPAN_ATTRIBUTES.type]: type,
    [SPAN_ATTRIBUTES.key]: key.join(KEY_SEPARATOR),
  };
}

/** Most fields and characters a stored carrier may have: anything else is not ours. */
const MAX_CARRIER_FIELDS = 4;
const MAX_CARRIER_CHARS = 1024;

/**
 * The carrier stored with a task, when it is one: an object of a few short strings. A task
 * is data another process wrote; a malformed carrier is ignored, never a reason to fail it.
 */
export function carrierOf(value: unknown): TraceCarrier | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  if (entries.length === 0 || entries.length > MAX_CARRIER_FIELDS) return undefined;
  let chars = 0;
  for (const [key, field] of entries) {
    if (typeof field !== 'string') return undefined;
    chars += key.length + field.length;
  }
  return chars <= MAX_CARRIER_CHARS ? (value as TraceCarrier) : undefined;
}

/** A task's queue span: the carrier its entry stores, and its end. */
export interface QueueTrace {
  carrier: TraceCarrier | undefined;
  end(error?: unknown): void;
}

/** Starts the queue span of the task at `key`, under the caller's current context. */
export function queueTrace(
  telemetry: Telemetry,
  world: string,
  key: TaskKey,
  type: string,
): QueueTrace {
  const cm = telemetry.contextManager;
  const parent = cm.active();
  const span = telemetry.tracer.startSpan(
    `queue ${type}`,
    { kind: 'producer', attributes: taskAttributes(world, key, type, 'create') },
    parent,
  );
  return {
    carrier: cm.inject(span.setSpanOnContext(parent)),
    end(error) {
      if (error !== undefined) span.recordError(error);
      span.end();
    },
  };
}

/** What is traced of one claim: the task's context, and its run once a worker runs it. */
interface ClaimTrace {
  /** The context the claim's spans are under (the producer's, the parent's, or its wait's). */
  task: unknown;
  /** The parent task's context, when the claim's spans link to it. */
  links: unknown[] | undefined;
  run?: { span: TelemetrySpan; ctx: unknown };
}

/** Claims being traced; a claim's trace goes with it. */
const traces = new WeakMap<Claim, ClaimTrace>();

function attemptAttributes(world: string, claim: Claim, operation: string): TelemetryAttributes {
  return {
    ...taskAttributes(world, claim.key, claim.type, operation),
    [SPAN_ATTRIBUTES.attempt]: claim.attempt,
  };
}

/**
 * The trace of `claim`, started on first use: the task's context (stored with it, else its
 * parent task's from `parentCarrier`, else a new trace) and its wait span, recorded now.
 */
function claimTrace(
  telemetry: Telemetry,
  world: string,
  claim: Claim,
  parentCarrier?: TraceCarrier,
): ClaimTrace {
  const known = traces.get(claim);
  if (known) return known;
  const cm = telemetry.contextManager;
  const stored = carrierOf(claim.entry.trace);
  const own = stored ? cm.extract(stored) : undefined;
  const up = parentCarrier ? cm.extract(parentCarrier) : undefined;
  const links = own !== undefined && up !== undefined ? [up] : undefined;
  const { entry } = claim;
  // A retry waited from the end of its backoff, the first attempt from its queueing.
  const from =
    claim.attempt > 1 && entry.notBefore !== undefined ? entry.notBefore : entry.queuedAt;
  // Clocks of two machines: a wait never ends before it starts.
  const wait = telemetry.tracer.startSpan(
    `wait ${claim.type}`,
    {
      kind: 'internal',
      attributes: attemptAttributes(world, claim, 'receive'),
      startTime: Math.min(from, claim.startedAt),
    },
    own ?? up,
  );
  wait.end(claim.startedAt);
  const task = own ?? up ?? wait.setSpanOnContext(cm.active());
  const trace: ClaimTrace = { task, links };
  traces.set(claim, trace);
  return trace;
}

/**
 * The context a child task without one of its own joins: the parent's completed record
 * holds it. Read only while spans are recorded; a record that cannot be read gives none.
 */
export async function parentCarrier(
  ctx: EngineContext,
  key: TaskKey,
): Promise<TraceCarrier | undefined> {
  if (key.length < 2 || ctx.telemetry?.enabled?.() === false) return undefined;
  try {
    return carrierOf((await completedRecord(ctx, key.slice(0, -1)))?.trace);
  } catch {
    return undefined;
  }
}

/** A worker's run of one claim, traced. */
export interface RunTrace {
  /** Runs `fn` (the handler) with the run span as the current context. */
  within<T>(fn: () => T): T;
  /** Ends the run span with the written outcome (and the handler's error, if it threw). */
  end(outcome: SettleOutcome, error?: unknown): void;
}

/** Starts the run span of `claim` (its wait span first) in `worker`. */
export function runTrace(
  telemetry: Telemetry,
  world: string,
  claim: Claim,
  worker: string,
  parent: TraceCarrier | undefined,
): RunTrace {
  const trace = claimTrace(telemetry, world, claim, parent);
  const span = telemetry.tracer.startSpan(
    `run ${claim.type}`,
    {
      kind: 'consumer',
      attributes: {
        ...attemptAttributes(world, claim, 'process'),
        [SPAN_ATTRIBUTES.worker]: worker,
      },
      ...(trace.links ? { links: trace.links } : {}),
    },
    trace.task,
  );
  const ctx = span.setSpanOnContext(trace.task);
  trace.run = { span, ctx };
  return {
    within: (fn) => telemetry.contextManager.with(ctx, fn),
    end(outcome, error) {
      span.setAttribute(SPAN_ATTRIBUTES.outcome, outcome.status);
      if (error !== undefined) span.recordError(error);
      span.end();
    },
  };
}

/** Runs `write`, the write that settles `claim` by `op`, inside its settle span. */
export async function settleTraced<T extends SettleOutcome>(
  telemetry: Telemetry,
  world: string,
  claim: Claim,
  op: 'complete' | 'fail' | 'release',
  write: () => Promise<T>,
): Promise<T> {
  const trace = claimTrace(telemetry, world, claim);
  // Under the run, when a worker runs the claim; else under the task's context.
  const span = telemetry.tracer.startSpan(
    `settle ${claim.type}`,
    {
      kind: 'internal',
      attributes: { ...attemptAttributes(world, claim, 'settle'), [SPAN_ATTRIBUTES.settle]: op },
    },
    trace.run?.ctx ?? trace.task,
  );
  try {
    const outcome = await write();
    span.setAttribute(SPAN_ATTRIBUTES.outcome, outcome.status);
    if (outcome.status === 'dropped') span.setAttribute('zoott.settle.dropped', outcome.reason);
    span.end();
    return outcome;
  } catch (err) {
    span.recordError(err);
    span.end();
    throw err;
  }
}

/**
 * The carrier a completed record keeps for the task's children: its run's context (or the
 * task's, when no worker run traced it), for children queued without a trace of their own.
 */
export function recordCarrier(telemetry: Telemetry, claim: Claim): TraceCarrier | undefined {
  const trace = traces.get(claim);
  if (!trace) return carrierOf(claim.entry.trace);
  return telemetry.contextManager.inject(trace.run?.ctx ?? trace.task);
}
