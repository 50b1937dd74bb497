// @zoott/otel/sdk: starts OpenTelemetry's SDK for a zoott program (zoott-worker and
// zoott-amqp-bridge with --trace) from the standard OTEL_* environment variables. The SDK
// packages are optional peer dependencies: the programs install them, a library user of
// `@zoott/otel` never loads this module and needs none of them.

import { type Context, type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { type Telemetry, ZoottError } from '@zoott/core';
import { otelTelemetry } from './index.js';

/** What a program is told about the tracing it started. */
export interface Tracing {
  telemetry: Telemetry<Context>;
  /** Where spans go: `otlp`, `console`, or `none` (spans are made and dropped). */
  exporter: 'otlp' | 'console' | 'none';
  /** For `otlp`: `http/protobuf` or `http/json`, and the URL spans are posted to. */
  protocol?: OtlpProtocol;
  endpoint?: string;
  /** Exports what is buffered now (and goes on). */
  flush(): Promise<void>;
  /**
   * Exports what is still buffered and stops; call before the process exits. Resolves after
   * `timeoutMs` (default 5000) at the latest: an unreachable collector does not hold an exit.
   */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** OTLP over HTTP in the encodings this module brings an exporter for. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Options of {@link startTracing}. */
export interface TracingOptions {
  /** `service.name` of the spans unless `OTEL_SERVICE_NAME` (or its resource attribute) says. */
  serviceName: string;
  /** Where the SDK's own complaints go (an export that failed, say). Default: dropped. */
  warn?: (message: string) => void;
  /** The environment to read (default `process.env`; the SDK reads `process.env` itself). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The SDK packages, each loaded only when tracing starts. */
const SDK_PACKAGES = [
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/resources',
  '@opentelemetry/exporter-trace-otlp-proto',
  '@opentelemetry/exporter-trace-otlp-http',
];

function badEnv(name: string, why: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', `${name}: ${why}`, { field: name });
}

/** The exporter `OTEL_TRACES_EXPORTER` names (one; `otlp` when unset). */
function exporterOf(env: TracingOptions['env'] & object): Tracing['exporter'] {
  const names = (env.OTEL_TRACES_EXPORTER ?? 'otlp')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const known = ['otlp', 'console', 'none'];
  const bad = names.find((n) => !known.includes(n));
  if (bad !== undefined)
    throw badEnv('OTEL_TRACES_EXPORTER', `${bad} is not one zoott brings (otlp, console or none)`);
  if (names.length > 1)
    throw badEnv('OTEL_TRACES_EXPORTER', `name one exporter, not ${names.join(', ')}`);
  return (names[0] ?? 'otlp') as Tracing['exporter'];
}

/** The OTLP protocol and endpoint the exporter uses, as the spec's variables say. */
function otlpTarget(env: TracingOptions['env'] & object): {
  protocol: OtlpProtocol;
  endpoint: string;
} {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[name] ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json')
    throw badEnv(
      name,
      `${protocol} is not supported (http/protobuf or http/json; gRPC needs a collector in between)`,
    );
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const endpoint =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (base ? `${base}/v1/traces` : 'http://localhost:4318/v1/traces');
  return { protocol, endpoint };
}

/** `OTEL_LOG_LEVEL` as the API's level (default: warnings and errors). */
function diagLevel(env: TracingOptions['env'] & object): DiagLogLevel {
  const level = (env.OTEL_LOG_LEVEL ?? 'warn').toUpperCase();
  const value = (DiagLogLevel as unknown as Record<string, number | undefined>)[level];
  if (value === undefined)
    throw badEnv('OTEL_LOG_LEVEL', `${env.OTEL_LOG_LEVEL} is not a level (none, error, warn, ...)`);
  return value;
}

async function load<T>(name: string, importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new ZoottError(
      'INVALID_CONFIG',
      `tracing needs the OpenTelemetry SDK, and ${name} is not installed: npm install ${SDK_PACKAGES.join(' ')}`,
      { field: 'trace' },
    );
  }
}

/**
 * Starts the SDK: a tracer provider registered globally (with the AsyncLocalStorage context
 * manager and the W3C propagators), its batch processor and the exporter that the standard
 * variables choose (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`,
 * `..._PROTOCOL`, `..._HEADERS`, `..._TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_TRACES_SAMPLER[_ARG]`, `OTEL_BSP_*`), and the telemetry to give zoott's engines.
 * `null` when `OTEL_SDK_DISABLED=true`.
 *
 * @throws ZoottError INVALID_CONFIG naming the variable that is wrong, or the SDK package missing.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing | null> {
  const env = options.env ?? process.env;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const exporterName = exporterOf(env);
  const target = exporterName === 'otlp' ? otlpTarget(env) : null;
  const level = diagLevel(env);
  const sdk = await load(SDK_PACKAGES[0]!, () => import('@opentelemetry/sdk-trace-node'));
  const res = await load(SDK_PACKAGES[1]!, () => import('@opentelemetry/resources'));
  let exporter: import('@opentelemetry/sdk-trace-node').SpanExporter | null = null;
  if (target?.protocol === 'http/protobuf') {
    const exporterModule = await load(
      SDK_PACKAGES[2]!,
      () => import('@opentelemetry/exporter-trace-otlp-proto'),
    );
    exporter = new exporterModule.OTLPTraceExporter();
  } else if (target) {
    const exporterModule = await load(
      SDK_PACKAGES[3]!,
      () => import('@opentelemetry/exporter-trace-otlp-http'),
    );
    exporter = new exporterModule.OTLPTraceExporter();
  } else if (exporterName === 'console') exporter = new sdk.ConsoleSpanExporter();
  const warn = options.warn;
  if (warn && level !== DiagLogLevel.NONE) {
    const say = (m: string, ...a: unknown[]) => warn([m, ...a.map(String)].join(' '));
    const quiet = () => {};
    const logger: DiagLogger = { error: say, warn: say, info: say, debug: quiet, verbose: quiet };
    diag.setLogger(logger, { logLevel: level, suppressOverrideMessage: true });
  }
  // The program's name, unless the environment names the service (it is merged last).
  const resource = res
    .defaultResource()
    .merge(res.resourceFromAttributes({ 'service.name': options.serviceName }))
    .merge(res.detectResources({ detectors: [res.envDetector] }));
  const provider = new sdk.NodeTracerProvider({
    resource,
    spanProcessors: exporter ? [new sdk.BatchSpanProcessor(exporter)] : [],
  });
  provider.register();
  return {
    telemetry: otelTelemetry(),
    exporter: exporterName,
    ...(target ? target : {}),
    flush: () => provider.forceFlush(),
    shutdown: (timeoutMs = 5000) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((done) => {
        timer = setTimeout(done, timeoutMs);
      });
      const flushed = provider.shutdown().catch((err: unknown) => warn?.(String(err)));
      return Promise.race([flushed, late]).finally(() => clearTimeout(timer));
    },
  };
}

/** Where spans go, in words, for a program to say when it starts (`null`: not started). */
export function describeTracing(tracing: Tracing | null): string {
  if (!tracing) return 'OTEL_SDK_DISABLED=true: no spans';
  if (tracing.exporter !== 'otlp') return `spans to ${tracing.exporter}`;
  return `spans to ${tracing.endpoint} (${tracing.protocol})`;
}
