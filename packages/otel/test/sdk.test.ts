import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { trace } from '@opentelemetry/api';
import { isZoottError } from '@zoott/core';
import { describeTracing, startTracing } from '@zoott/otel/sdk';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
/** This package's directory (its dist, and node_modules of the workspace install). */
const packageDir = fileURLToPath(new URL('..', import.meta.url));

// The SDK starter of the programs (zoott-worker/zoott-amqp-bridge --trace): what the standard
// OTEL_* variables choose, and the refusals that name the variable that is wrong.

async function refusal(env: Record<string, string>): Promise<string> {
  try {
    await startTracing({ serviceName: 'test', env });
  } catch (err) {
    expect(isZoottError(err, 'INVALID_CONFIG')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('started');
}

describe('@zoott/otel/sdk: the SDK from the OTEL_* variables', () => {
  afterEach(() => {
    trace.disable();
  });

  it('starts nothing when OTEL_SDK_DISABLED=true, and says so', async () => {
    const t = await startTracing({ serviceName: 'test', env: { OTEL_SDK_DISABLED: 'TRUE' } });
    expect(t).toBeNull();
    expect(describeTracing(t)).toBe('OTEL_SDK_DISABLED=true: no spans');
  });

  it('reads the endpoint and the protocol as the specification says', async () => {
    const base = await startTracing({
      serviceName: 'test',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_BSP_SCHEDULE_DELAY: '10' },
    });
    expect(describeTracing(base)).toBe('spans to http://collector:4318/v1/traces (http/protobuf)');
    await base?.shutdown(100);
    const own = await startTracing({
      serviceName: 'test',
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/in',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      },
    });
    expect(describeTracing(own)).toBe('spans to http://traces:9999/in (http/json)');
    await own?.shutdown(100);
    const local = await startTracing({ serviceName: 'test', env: {} });
    expect(local).toMatchObject({
      exporter: 'otlp',
      protocol: 'http/protobuf',
      endpoint: 'http://localhost:4318/v1/traces',
    });
    await local?.shutdown(100);
  });

  it('takes the exporters it brings (otlp, console, none), one at a time', async () => {
    const none = await startTracing({ serviceName: 'test', env: { OTEL_TRACES_EXPORTER: 'none' } });
    expect(describeTracing(none)).toBe('spans to none');
    // Spans are made and go nowhere: the engine's hook still works.
    expect(none?.telemetry.enabled?.()).toBe(true);
    await none?.shutdown();
    expect(await refusal({ OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(
      'INVALID_CONFIG: OTEL_TRACES_EXPORTER: zipkin is not one zoott brings (otlp, console or none)',
    );
    expect(await refusal({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toContain(
      'OTEL_TRACES_EXPORTER: name one exporter',
    );
    expect(await refusal({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toContain(
      'OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported',
    );
    expect(await refusal({ OTEL_LOG_LEVEL: 'loud' })).toContain(
      'OTEL_LOG_LEVEL: loud is not a level',
    );
  });

  it('says which SDK package is missing, and how to install it (the built package)', async () => {
    // An install of @zoott/otel whose application has the API and only part of the SDK: the
    // built package copied in (its own node_modules would find the rest), the others linked.
    const dist = fileURLToPath(new URL('../dist/sdk.js', import.meta.url));
    if (!existsSync(dist)) throw new Error(`${dist} is missing: run pnpm build first`);
    const app = mkdtempSync(join(tmpdir(), 'zoott-otel-partial-'));
    try {
      const modules = join(app, 'node_modules');
      cpSync(packageDir, join(modules, '@zoott/otel'), {
        recursive: true,
        filter: (from) => !from.includes('node_modules') && !from.includes('/test'),
      });
      const linked = ['@zoott/core', '@opentelemetry/api', '@opentelemetry/sdk-trace-node'];
      for (const name of linked) {
        mkdirSync(dirname(join(modules, name)), { recursive: true });
        symlinkSync(realpathSync(join(packageDir, 'node_modules', name)), join(modules, name));
      }
      const script =
        "import('@zoott/otel/sdk').then((m) => m.startTracing({ serviceName: 'x' })).then(" +
        "() => console.log('started'), (e) => console.log(e.code + ' ' + e.message));";
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        cwd: app,
      });
      expect(stdout.trim()).toBe(
        'INVALID_CONFIG INVALID_CONFIG: tracing needs the OpenTelemetry SDK, and @opentelemetry/resources is not installed: npm install @opentelemetry/sdk-trace-node @opentelemetry/resources @opentelemetry/exporter-trace-otlp-proto @opentelemetry/exporter-trace-otlp-http',
      );
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });
});
