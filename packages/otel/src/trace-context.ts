import {
  type Context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  type SpanContext,
  trace,
} from '@opentelemetry/api';
import type { TraceCarrier } from '@zoott/core';

/**
 * A context as a task stores it: W3C Trace Context (`traceparent`, `tracestate`), written here
 * and not by the application's registered propagator. A task outlives the process that queued
 * it and is read by workers configured on their own, so its form must not depend on how one
 * process set up OpenTelemetry (B3, Jaeger, or no SDK at all: a producer without an SDK still
 * passes on the context it was given).
 */

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
/** Most `tracestate` characters kept: the W3C limit is 32 members of at most 256 each. */
const MAX_TRACESTATE = 512;

/** The trace context of `ctx` as a carrier; `undefined` when `ctx` carries no valid span. */
export function injectContext(ctx: Context): TraceCarrier | undefined {
  const sc = trace.getSpanContext(ctx);
  if (!sc || !isSpanContextValid(sc)) return undefined;
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
  const carrier: TraceCarrier = { traceparent: `00-${sc.traceId}-${sc.spanId}-${flags}` };
  const state = sc.traceState?.serialize();
  if (state && state.length <= MAX_TRACESTATE) carrier.tracestate = state;
  return carrier;
}

/**
 * The remote span context a carrier names, as the W3C spec reads `traceparent`: version `ff`
 * is invalid, version 00 has exactly four fields, a later version may add fields after them.
 */
export function parseTraceparent(carrier: TraceCarrier): SpanContext | undefined {
  const match = TRACEPARENT.exec(carrier.traceparent ?? '');
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const sc: SpanContext = {
    traceId: traceId!,
    spanId: spanId!,
    traceFlags: Number.parseInt(flags!, 16) & 0x01,
    isRemote: true,
  };
  if (!isSpanContextValid(sc)) return undefined;
  const state = carrier.tracestate;
  if (typeof state === 'string' && state.length > 0 && state.length <= MAX_TRACESTATE)
    sc.traceState = createTraceState(state);
  return sc;
}

/** The context whose span is the carrier's remote span; `undefined` when it names none. */
export function extractContext(carrier: TraceCarrier): Context | undefined {
  const sc = parseTraceparent(carrier);
  return sc ? trace.setSpanContext(ROOT_CONTEXT, sc) : undefined;
}
