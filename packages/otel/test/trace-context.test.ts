import { createTraceState, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { extractContext, injectContext, parseTraceparent } from '@zoott/otel';
import { describe, expect, it } from 'vitest';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('otel: the trace context a task stores (W3C Trace Context)', () => {
  it('writes traceparent and tracestate, and reads them back as a remote span', () => {
    const ctx = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: TRACE,
      spanId: SPAN,
      traceFlags: 1,
      traceState: createTraceState('vendor=a,other=b'),
    });
    const carrier = injectContext(ctx);
    expect(carrier).toEqual({
      traceparent: `00-${TRACE}-${SPAN}-01`,
      tracestate: 'vendor=a,other=b',
    });
    const back = trace.getSpanContext(extractContext(carrier!)!);
    expect(back).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
    expect(back?.traceState?.get('vendor')).toBe('a');
  });

  it('has nothing to write for a context without a valid span', () => {
    expect(injectContext(ROOT_CONTEXT)).toBeUndefined();
    const invalid = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0'.repeat(32),
      spanId: SPAN,
      traceFlags: 1,
    });
    expect(injectContext(invalid)).toBeUndefined();
  });

  it('reads what the spec allows and refuses the rest', () => {
    const ok = (traceparent: string) => parseTraceparent({ traceparent }) !== undefined;
    expect(ok(`00-${TRACE}-${SPAN}-00`)).toBe(true);
    // Only the sampled bit is a flag this version knows.
    expect(parseTraceparent({ traceparent: `00-${TRACE}-${SPAN}-03` })?.traceFlags).toBe(1);
    // A later version may add fields; version 00 may not, and ff is never valid.
    expect(ok(`01-${TRACE}-${SPAN}-01-extra`)).toBe(true);
    expect(ok(`00-${TRACE}-${SPAN}-01-extra`)).toBe(false);
    expect(ok(`ff-${TRACE}-${SPAN}-01`)).toBe(false);
    // All-zero ids, upper case, wrong lengths, junk.
    expect(ok(`00-${'0'.repeat(32)}-${SPAN}-01`)).toBe(false);
    expect(ok(`00-${TRACE}-${'0'.repeat(16)}-01`)).toBe(false);
    expect(ok(`00-${TRACE.toUpperCase()}-${SPAN}-01`)).toBe(false);
    expect(ok(`00-${TRACE.slice(1)}-${SPAN}-01`)).toBe(false);
    expect(ok('not-a-trace')).toBe(false);
    expect(parseTraceparent({})).toBeUndefined();
    expect(extractContext({ traceparent: 'x' })).toBeUndefined();
  });

  it('drops a tracestate too long to be one, keeping the span', () => {
    const sc = parseTraceparent({
      traceparent: `00-${TRACE}-${SPAN}-01`,
      tracestate: 'a=b,'.repeat(200),
    });
    expect(sc?.spanId).toBe(SPAN);
    expect(sc?.traceState).toBeUndefined();
  });
});
