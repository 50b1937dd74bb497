// Tracing's cost (docs/tracing.md): the drain again, with every worker's engine tracing
// through OpenTelemetry's SDK (batch processor, OTLP/HTTP protobuf, as `zoott-worker --trace`
// starts it) to a receiver this process runs, which counts what it is sent. The untraced drain
// of the same run is the reference: `drain_traced_vs_drain` is the traced rate over it.
import { createServer } from 'node:http';

/**
 * A stand-in collector on 127.0.0.1: answers every export with 200 and counts requests and
 * bytes, so the workers pay for encoding and sending their spans, and nothing more.
 */
export async function startSpanSink() {
  const seen = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (b) => {
      seen.bytes += b.length;
    });
    req.on('end', () => {
      seen.requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

let started = null;

/**
 * In a worker process: the telemetry of the SDK, started once (a process keeps its global
 * tracer provider), exporting to `endpoint` as zoott-worker would from the OTEL_* variables.
 */
export async function workerTelemetry(endpoint) {
  if (!started) {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    const { startTracing } = await import('../packages/otel/dist/sdk.js');
    started = startTracing({ serviceName: 'bench-worker' });
  }
  return (await started).telemetry;
}

/** In a worker process: sends the spans still buffered (a stop, after the measured window). */
export async function flushSpans() {
  await (await started)?.flush();
}

/**
 * The traced drain: `drainTasks` (the bench's own, with options for the workers' run) of
 * `total` tasks whose workers trace, after a traced warm-up of `warmup` (the SDK's first
 * spans, JIT). Returns its rate, CPU per task, and what the sink got (the workers flush their
 * last spans when they stop, after the measured window).
 */
export async function tracedDrain(c, fleet, drainTasks, { total, warmup }) {
  const sink = await startSpanSink();
  try {
    const run = { trace: sink.url };
    await drainTasks(c, fleet, 'traced-warmup', warmup, run);
    const before = { ...sink.seen };
    const res = await drainTasks(c, fleet, 'traced', total, run);
    return {
      ...res,
      exportRequests: sink.seen.requests - before.requests,
      exportBytesPerTask: (sink.seen.bytes - before.bytes) / total,
    };
  } finally {
    await sink.close();
  }
}
