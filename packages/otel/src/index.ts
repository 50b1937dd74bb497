// @zoott/otel: zoott's tracing hook (`EngineOptions.telemetry`) over OpenTelemetry's API. It
// makes the spans; an SDK the application registers records and exports them. Without one the
// API answers with spans that record nothing, so installing this costs next to nothing.

import {
  type Context,
  context,
  type Link,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  type Telemetry,
  type TelemetrySpan,
  type TelemetrySpanKind,
  ZOOTT_VERSION,
} from '@zoott/core';
import { extractContext, injectContext } from './trace-context.js';

export { extractContext, injectContext, parseTraceparent } from './trace-context.js';

/** The instrumentation scope of zoott's spans. */
export const TRACER_NAME = '@zoott/otel';

/** Options of {@link otelTelemetry}. */
export interface OtelTelemetryOptions {
  /**
   * The tracer to make spans with. Default: the global tracer provider's tracer named
   * {@link TRACER_NAME}, which finds an SDK registered later, too.
   */
  tracer?: Tracer;
}

const KINDS: Record<TelemetrySpanKind, SpanKind> = {
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
};

/** What went wrong, as an exception event and the span's error status. */
function recordError(span: Span, error: unknown): void {
  const message =
    typeof error === 'object' && error !== null && 'message' in error
      ? String((error as { message: unknown }).message)
      : String(error);
  if (error instanceof Error) span.recordException(error);
  else {
    const code = (error as { code?: unknown } | null)?.code;
    span.recordException({ message, ...(typeof code === 'string' ? { name: code } : {}) });
  }
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

function wrap(span: Span): TelemetrySpan<Context> {
  return {
    setSpanOnContext: (ctx) => trace.setSpan(ctx, span),
    setAttribute: (key, value) => void span.setAttribute(key, value),
    recordError: (error) => recordError(span, error),
    end: (endTime) => span.end(endTime),
  };
}

/**
 * zoott's tracing hook on OpenTelemetry: give it to the engine (and to `runWorker` through
 * it) as `createEngine(zk, { world, telemetry: otelTelemetry() })`. Spans go to the tracer
 * provider the application registered (an SDK's `NodeTracerProvider`, say); tasks carry the
 * producer's context in W3C form, so a worker continues the producer's trace.
 */
export function otelTelemetry(options: OtelTelemetryOptions = {}): Telemetry<Context> {
  const given = options.tracer;
  // The global one is a proxy that finds the registered SDK's tracer when it has one.
  const tracer = given ?? trace.getTracer(TRACER_NAME, ZOOTT_VERSION);
  return {
    tracer: {
      startSpan(name, spanOptions, parent) {
        const links: Link[] = [];
        for (const link of spanOptions.links ?? []) {
          const sc = trace.getSpanContext(link as Context);
          if (sc) links.push({ context: sc });
        }
        const span = tracer.startSpan(
          name,
          {
            kind: KINDS[spanOptions.kind],
            attributes: spanOptions.attributes,
            ...(spanOptions.startTime !== undefined ? { startTime: spanOptions.startTime } : {}),
            ...(links.length > 0 ? { links } : {}),
          },
          // No parent: a trace of its own, whatever the caller's current context holds.
          parent ?? ROOT_CONTEXT,
        );
        return wrap(span);
      },
    },
    contextManager: {
      active: () => context.active(),
      with: (ctx, fn) => context.with(ctx, fn),
      inject: injectContext,
      extract: extractContext,
    },
    enabled() {
      if (given) return true;
      const provider = trace.getTracerProvider();
      // The global provider is a proxy that has a delegate once an SDK registered one.
      return (
        !(provider instanceof ProxyTracerProvider) || !!provider.getDelegateTracer(TRACER_NAME)
      );
    },
  };
}
