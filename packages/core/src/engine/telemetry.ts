/**
 * The tracing hook of the engine: what a tracer must offer for zoott to report the spans of
 * every task (queue, wait, run, settle). Core knows no tracing library: an implementation is
 * given in `EngineOptions.telemetry` (`@zoott/otel` gives one over `@opentelemetry/api`). With
 * none given, the engine makes no span, stores no trace context and reads nothing for tracing.
 *
 * `C` is the implementation's context type (OpenTelemetry's `Context`); the engine only passes
 * contexts back to the implementation that made them.
 */

/**
 * A trace context as stored in a task, in W3C Trace Context form: `traceparent` and, when the
 * context has one, `tracestate`. Stored in the task's pending entry (and its completed record),
 * so a worker in another process continues the producer's trace.
 */
export type TraceCarrier = Record<string, string>;

/** Span attributes: what a span says about its task. */
export type TelemetryAttributes = Record<string, string | number | boolean>;

/** How a span relates to the work around it, as OpenTelemetry's span kinds do. */
export type TelemetrySpanKind = 'producer' | 'consumer' | 'internal';

/** What a span starts with. */
export interface TelemetrySpanOptions {
  kind: TelemetrySpanKind;
  attributes: TelemetryAttributes;
  /** When it started, in ms since the epoch, for a span recorded after the fact (the wait). */
  startTime?: number;
  /** Contexts whose spans this one is linked to (a child task's run, to its parent's). */
  links?: readonly unknown[];
}

/** One span of a task, open until `end`. */
export interface TelemetrySpan<C = unknown> {
  /** `ctx` with this span as its current span: the parent of spans started under it. */
  setSpanOnContext(ctx: C): C;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Marks the span failed, with what went wrong (an Error, or a zoott task error). */
  recordError(error: unknown): void;
  /** Ends the span, at `endTime` (ms since the epoch) when given, else now. */
  end(endTime?: number): void;
}

/** Starts spans. */
export interface TelemetryTracer<C = unknown> {
  /** A span under `parent`; with no `parent` the span starts a trace of its own. */
  startSpan(name: string, options: TelemetrySpanOptions, parent?: C): TelemetrySpan<C>;
}

/** The current context, and a context's form as stored in a task. */
export interface TelemetryContextManager<C = unknown> {
  /** The caller's current context (a producer's span, say). */
  active(): C;
  /** Runs `fn` with `ctx` as the current context (a handler, inside its run span). */
  with<T>(ctx: C, fn: () => T): T;
  /** The trace context of `ctx` to store in a task; `undefined` when `ctx` carries no trace. */
  inject(ctx: C): TraceCarrier | undefined;
  /** The context a stored carrier describes; `undefined` when it describes none. */
  extract(carrier: TraceCarrier): C | undefined;
}

/** A tracing implementation, given as `EngineOptions.telemetry` (see `@zoott/otel`). */
export interface Telemetry<C = unknown> {
  tracer: TelemetryTracer<C>;
  contextManager: TelemetryContextManager<C>;
  /**
   * Whether spans are recorded now. When this says no, the engine skips the reads that only
   * tracing needs (a child's parent record, for the trace a child queued without one joins).
   * Absent: always.
   */
  enabled?(): boolean;
}
