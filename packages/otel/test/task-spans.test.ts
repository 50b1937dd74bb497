import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  type Coordinator,
  createEngine,
  type Engine,
  type EngineOptions,
  runWorker,
  type Telemetry,
  type WorkerHandle,
} from '@zoott/core';
import { otelTelemetry } from '@zoott/otel';
import { describeOnBackends, until } from '@zoott/testing';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';

// Spans as the SDK records them, into memory. The tracer is given to the telemetry, so no
// global provider is registered: the context manager is, for the producer's active span.
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('test');
const telemetry = otelTelemetry({ tracer });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => exporter.reset());

let counter = 0;
const worldName = () => `otel${process.pid}x${++counter}`;
const quiet = { warn: () => {}, info: () => {} };
const fast = { pollMs: 100, stealAfterMs: 50, logger: quiet };

/** The span named `name` whose task key is `key` (attempt `attempt`, when given). */
function span(name: string, key: string, attempt?: number): ReadableSpan {
  const found = exporter
    .getFinishedSpans()
    .filter(
      (s) =>
        s.name === name &&
        s.attributes['zoott.task.key'] === key &&
        (attempt === undefined || s.attributes['zoott.task.attempt'] === attempt),
    );
  if (found.length !== 1)
    throw new Error(`${found.length} spans ${name} of ${key}: ${names().join(', ')}`);
  return found[0]!;
}

function names(): string[] {
  return exporter
    .getFinishedSpans()
    .map((s) => `${s.name}(${String(s.attributes['zoott.task.key'])})`);
}

/** Waits until the span exists (a run span ends just after the record is written). */
function ended(name: string, key: string, attempt?: number): Promise<ReadableSpan> {
  return until(`span ${name} of ${key}`, () => {
    try {
      return span(name, key, attempt);
    } catch {
      return undefined;
    }
  });
}

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const traceOf = (s: ReadableSpan) => s.spanContext().traceId;

describeOnBackends('otel: the spans of a task', (backend) => {
  let workers: WorkerHandle[] = [];
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    workers = [];
  });

  /** A world, an engine on it with `options`, and a traced worker running `handlers`. */
  async function world(
    handlers: Parameters<typeof runWorker>[1],
    options: Partial<EngineOptions> = {},
  ): Promise<{ c: Coordinator; world: string; producer: Engine; start: () => void }> {
    const c = await backend().connect();
    const name = worldName();
    const producer = createEngine(c, { world: name, buckets: 2, logger: quiet, ...options });
    await producer.init();
    const start = () => {
      const engine = createEngine(c, { world: name, logger: quiet, telemetry });
      workers.push(runWorker(c, handlers, { world: name, engine, id: 'w1', ...fast }));
    };
    return { c, world: name, producer, start };
  }

  it("a worker's wait, run and settle continue the producer's trace, under its queue span", async () => {
    const w = await world({ t: async () => 'ok' }, { telemetry });
    const root = await tracer.startActiveSpan('producer', async (s) => {
      await w.producer.queue({ name: 'a', type: 't' });
      s.end();
      return s;
    });
    w.start();
    const run = await ended('run t', 'a');
    const queue = span('queue t', 'a');
    const wait = span('wait t', 'a');
    const settle = span('settle t', 'a');
    for (const s of [queue, wait, run, settle]) expect(traceOf(s)).toBe(root.spanContext().traceId);
    expect(parentOf(queue)).toBe(root.spanContext().spanId);
    expect(queue.kind).toBe(SpanKind.PRODUCER);
    expect(queue.attributes).toMatchObject({
      'zoott.world': w.world,
      'zoott.task.type': 't',
      'zoott.task.key': 'a',
      'messaging.system': 'zoott',
    });
    expect(parentOf(wait)).toBe(idOf(queue));
    expect(parentOf(run)).toBe(idOf(queue));
    expect(parentOf(settle)).toBe(idOf(run));
    expect(run.kind).toBe(SpanKind.CONSUMER);
    expect(run.attributes).toMatchObject({
      'zoott.world': w.world,
      'zoott.task.type': 't',
      'zoott.task.key': 'a',
      'zoott.task.attempt': 1,
      'zoott.worker': 'w1',
      'zoott.task.outcome': 'completed',
    });
    expect(wait.attributes['zoott.task.attempt']).toBe(1);
    expect(settle.attributes).toMatchObject({
      'zoott.settle.op': 'complete',
      'zoott.task.outcome': 'completed',
    });
    // The wait runs from the queueing to the claim: it starts before the run, ends at its start.
    const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    expect(ms(wait.startTime)).toBeLessThanOrEqual(ms(wait.endTime));
    expect(ms(wait.endTime)).toBeLessThanOrEqual(ms(run.startTime) + 1);
  });

  it('a tree queued by a producer that traces nothing is one trace, each child under its parent run', async () => {
    const w = await world({ t: async () => 'ok' });
    await w.producer.queue({ name: 'a', type: 't' });
    await w.producer.queue({ name: 'b', type: 't', parent: { key: ['a'] } });
    await w.producer.queue({ name: 'c', type: 't', parent: { key: ['a', 'b'] } });
    w.start();
    const runC = await ended('run t', 'a|b|c');
    const [waitA, runA] = [span('wait t', 'a'), span('run t', 'a')];
    const [waitB, runB, waitC] = [
      span('wait t', 'a|b'),
      span('run t', 'a|b'),
      span('wait t', 'a|b|c'),
    ];
    expect(exporter.getFinishedSpans().filter((s) => s.name.startsWith('queue'))).toEqual([]);
    const traces = new Set(exporter.getFinishedSpans().map(traceOf));
    expect(traces.size).toBe(1);
    // The root's wait starts the trace; its run is under it; each child's under its parent's run.
    expect(parentOf(waitA)).toBeUndefined();
    expect(parentOf(runA)).toBe(idOf(waitA));
    expect(parentOf(waitB)).toBe(idOf(runA));
    expect(parentOf(runB)).toBe(idOf(runA));
    expect(parentOf(waitC)).toBe(idOf(runB));
    expect(parentOf(runC)).toBe(idOf(runB));
  });

  it("a child queued in another trace is linked to its parent's run", async () => {
    const w = await world({ t: async () => 'ok' }, { telemetry });
    await w.producer.queue({ name: 'p', type: 't' });
    w.start();
    const runP = await ended('run t', 'p');
    const other = await tracer.startActiveSpan('elsewhere', async (s) => {
      await w.producer.queue({ name: 'k', type: 't', parent: { key: ['p'] } });
      s.end();
      return s;
    });
    const runK = await ended('run t', 'p|k');
    expect(traceOf(runK)).toBe(other.spanContext().traceId);
    expect(parentOf(runK)).toBe(idOf(span('queue t', 'p|k')));
    expect(runK.links.map((l) => l.context.spanId)).toEqual([idOf(runP)]);
    expect(runK.links[0]!.context.traceId).toBe(traceOf(runP));
  });

  it("a task a handler queues is queued under the handler's run", async () => {
    let engine: Engine | null = null;
    const w = await world({
      parent: async (ctx) => {
        await engine!.queue({ name: 'kid', type: 'kid', parent: { key: ctx.key } });
        return 'queued';
      },
      kid: async () => 'ok',
    });
    engine = createEngine(w.c, { world: w.world, telemetry });
    await w.producer.queue({ name: 'top', type: 'parent' });
    w.start();
    const runKid = await ended('run kid', 'top|kid');
    const runTop = span('run parent', 'top');
    const queueKid = span('queue kid', 'top|kid');
    expect(parentOf(queueKid)).toBe(idOf(runTop));
    expect(parentOf(runKid)).toBe(idOf(queueKid));
    // Its own context is its parent's trace already: the link says the same once more.
    expect(traceOf(runKid)).toBe(traceOf(runTop));
  });

  it('a failed attempt marks its run and settle, and the retry continues the same trace', async () => {
    let calls = 0;
    const w = await world(
      {
        t: async () => {
          calls++;
          if (calls === 1) throw new Error('first try fails');
          return 'ok';
        },
      },
      { telemetry, defaults: { backoff: { baseMs: 0, maxMs: 0 } } },
    );
    await w.producer.queue({ name: 'a', type: 't', maxAttempts: 2 });
    w.start();
    const second = await ended('run t', 'a', 2);
    const first = span('run t', 'a', 1);
    const queue = span('queue t', 'a');
    expect(first.status).toEqual({ code: SpanStatusCode.ERROR, message: 'first try fails' });
    expect(first.events.map((e) => e.name)).toEqual(['exception']);
    expect(first.attributes['zoott.task.outcome']).toBe('retrying');
    expect(span('settle t', 'a', 1).attributes['zoott.task.outcome']).toBe('retrying');
    expect(second.attributes['zoott.task.outcome']).toBe('completed');
    expect(second.status.code).toBe(SpanStatusCode.UNSET);
    for (const s of [first, second, span('wait t', 'a', 2)]) expect(parentOf(s)).toBe(idOf(queue));
  });

  it('queueMany gives every task its own queue span, and each run is under its own', async () => {
    const w = await world({ t: async () => 'ok' }, { telemetry });
    await tracer.startActiveSpan('batch', async (s) => {
      await w.producer.queueMany(['x', 'y', 'z'].map((name) => ({ name, type: 't' })));
      s.end();
    });
    w.start();
    for (const key of ['x', 'y', 'z']) {
      const run = await ended('run t', key);
      expect(parentOf(run)).toBe(idOf(span('queue t', key)));
    }
  });

  it('a claim settled by hand gets its wait and settle spans, the record its trace', async () => {
    const w = await world({ t: async () => 'ok' }, { telemetry });
    await tracer.startActiveSpan('producer', async (s) => {
      await w.producer.queue({ name: 'a', type: 't' });
      s.end();
    });
    const claim = await w.producer.claim({ worker: 'hand' });
    expect(claim?.entry.trace?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await w.producer.fail(claim!, new Error('by hand'));
    const queue = span('queue t', 'a');
    expect(parentOf(span('wait t', 'a'))).toBe(idOf(queue));
    const settle = span('settle t', 'a');
    expect(parentOf(settle)).toBe(idOf(queue));
    expect(settle.attributes).toMatchObject({
      'zoott.settle.op': 'fail',
      'zoott.task.outcome': 'retrying',
    });
  });
});

describeOnBackends('otel: nothing without a tracer', (backend) => {
  it('an engine without telemetry, or whose API has no SDK behind it, stores no trace context', async () => {
    const c = await backend().connect();
    const world = worldName();
    const plain = createEngine(c, { world, buckets: 2, logger: quiet });
    await plain.init();
    // No SDK registered globally: the default tracer makes spans that record nothing.
    const bare = otelTelemetry();
    expect(bare.enabled?.()).toBe(false);
    const noSdk = createEngine(c, { world, logger: quiet, telemetry: bare });
    await tracer.startActiveSpan('producer', async (s) => {
      await plain.queue({ name: 'a', type: 't' });
      s.end();
    });
    await noSdk.queue({ name: 'b', type: 't' });
    const claims = await plain.claimMany(2, { worker: 'w' });
    expect(claims.map((cl) => [cl.name, cl.entry.trace])).toEqual([
      ['a', undefined],
      ['b', undefined],
    ]);
    for (const cl of claims) await plain.complete(cl, 'ok');
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['producer']);
  });

  it("a worker whose API has no SDK reads no parent record for a child's trace", async () => {
    const c = await backend().connect();
    const world = worldName();
    const producer = createEngine(c, { world, buckets: 2, logger: quiet });
    await producer.init();
    await producer.queue({ name: 'p', type: 't' });
    await producer.queue({ name: 'k', type: 't', parent: { key: ['p'] } });
    // The worker's session, with every read of a completed record noted.
    const records: string[] = [];
    const watched = new Proxy(c, {
      get(target, prop, receiver) {
        if (prop === 'get')
          return (path: string, ...rest: unknown[]) => {
            if (path.startsWith('/zoott_c/')) records.push(path);
            return (target.get as (...a: unknown[]) => unknown).call(target, path, ...rest);
          };
        return Reflect.get(target, prop, receiver);
      },
    });
    const engine = createEngine(watched, { world, logger: quiet, telemetry: otelTelemetry() });
    const worker = runWorker(watched, { t: async () => 'ok' }, { world, engine, ...fast });
    try {
      await until('the child to complete', async () =>
        (await producer.task(['p', 'k']))?.state === 'completed' ? true : undefined,
      );
      expect(records).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it('a producer without an SDK passes on the context it runs in', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, {
      world,
      buckets: 2,
      logger: quiet,
      telemetry: otelTelemetry(),
    });
    await engine.init();
    const given = trace.setSpanContext(context.active(), {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
    });
    await context.with(given, () => engine.queue({ name: 'a', type: 't' }));
    const claim = await engine.claim({ worker: 'w' });
    expect(claim?.entry.trace).toEqual({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
  });

  it('a carrier that is not a trace context is ignored: the task runs in a trace of its own', async () => {
    const c = await backend().connect();
    const world = worldName();
    // A producer whose hook stores junk (another program, or a hand-written entry).
    const junk: Telemetry = {
      ...telemetry,
      contextManager: {
        ...telemetry.contextManager,
        inject: () => ({ traceparent: 'not-a-trace', n: 5 as unknown as string }),
      },
    };
    const producer = createEngine(c, { world, buckets: 2, logger: quiet, telemetry: junk });
    await producer.init();
    await producer.queue({ name: 'a', type: 't' });
    exporter.reset();
    // What the worker's hook is asked to read: never what is not a carrier.
    const read: unknown[] = [];
    const reading: Telemetry = {
      ...telemetry,
      contextManager: {
        ...telemetry.contextManager,
        extract: (carrier) => {
          read.push(carrier);
          return telemetry.contextManager.extract(carrier);
        },
      },
    };
    const engine = createEngine(c, { world, logger: quiet, telemetry: reading });
    const worker = runWorker(c, { t: async () => 'ok' }, { world, engine, ...fast });
    try {
      const run = await ended('run t', 'a');
      expect(parentOf(run)).toBe(idOf(span('wait t', 'a')));
      expect(parentOf(span('wait t', 'a'))).toBeUndefined();
      expect(read).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});
