import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createEngine } from '@zoott/core';
import { type OtlpReceiver, settled, spansOf, startOtlpReceiver } from '@zoott/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { processSuite } from './worker-bin.js';

// Tracing as an operator turns it on: a tree queued with the zoott CLI (which traces nothing),
// run by the built zoott-worker with --trace, its spans exported over OTLP/HTTP to a receiver
// this test runs, the way the standard OTEL_* variables say.

const CLI = fileURLToPath(new URL('../../../packages/cli/dist/bin.js', import.meta.url));
const run = promisify(execFile);

describe('zoott-worker --trace', { timeout: 120_000 }, () => {
  const suite = processSuite('trace');
  let handlers: string;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    handlers = join(suite.dir, 'handlers.mjs');
    writeFileSync(handlers, 'export function step(task) { return { done: task.name }; }\n');
  });

  afterEach(async () => {
    await receiver?.close();
  });

  /** The CLI, on this test's namespace and `world`, with no config file or ZOOTT_ variable. */
  const zoott = (world: string, ...args: string[]) => {
    const env: NodeJS.ProcessEnv = { XDG_CONFIG_HOME: join(suite.dir, 'no-config') };
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ZOOTT_')) env[k] ??= v;
    return run(process.execPath, [CLI, '--connect', suite.ns, '--world', world, ...args], {
      env,
      cwd: suite.dir,
    });
  };

  /** Queues top → mid → leaf with the CLI, runs a worker with `env`, waits for the leaf. */
  async function treeThroughWorker(world: string, env: Record<string, string>) {
    await zoott(world, 'init', world);
    await zoott(world, 'queue', 'top', '--type', 'step');
    await zoott(world, 'queue', 'mid', '--type', 'step', '--parent', 'top');
    await zoott(world, 'queue', 'leaf', '--type', 'step', '--parent', 'top|mid');
    receiver = await startOtlpReceiver();
    const worker = suite.start(
      [
        '--connect',
        suite.ns,
        '--world',
        world,
        '--node-id',
        `${world}-w`,
        '--handlers',
        handlers,
        '--trace',
      ],
      // No export on a timer: all that arrives, the stop's flush sends.
      {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_BSP_SCHEDULE_DELAY: '600000',
          ...env,
        },
      },
    );
    const leaf = await settled(suite.client, world, ['top', 'mid', 'leaf']);
    expect(leaf.state).toBe('completed');
    expect(receiver.requests).toEqual([]);
    // A stop flushes what the batch processor still holds.
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    return worker;
  }

  it('a three-level tree queued by the CLI arrives at the collector as one trace (OTLP/HTTP JSON)', async () => {
    const world = 'tree';
    const worker = await treeThroughWorker(world, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(worker.output()).toContain(
      `zoott-worker: tracing: spans to ${receiver.url}/v1/traces (http/json)`,
    );
    expect(receiver.requests.every((r) => r.path === '/v1/traces')).toBe(true);
    const spans = spansOf(receiver.requests).filter((s) => s.attributes['zoott.world'] === world);
    const one = (name: string, key: string) => {
      const found = spans.filter((s) => s.name === name && s.attributes['zoott.task.key'] === key);
      expect(found, `${name} of ${key}`).toHaveLength(1);
      return found[0]!;
    };
    const keys = ['top', 'top|mid', 'top|mid|leaf'];
    const runs = keys.map((k) => one('run step', k));
    const waits = keys.map((k) => one('wait step', k));
    const settles = keys.map((k) => one('settle step', k));
    expect(spans).toHaveLength(9);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['zoott-worker']));
    // The top task's wait starts the trace; each child's wait and run are under its parent's run.
    expect(waits[0]!.parentSpanId).toBe('');
    expect(runs[0]!.parentSpanId).toBe(waits[0]!.spanId);
    for (const i of [1, 2]) {
      expect(waits[i]!.parentSpanId).toBe(runs[i - 1]!.spanId);
      expect(runs[i]!.parentSpanId).toBe(runs[i - 1]!.spanId);
    }
    for (const [i, s] of settles.entries()) expect(s.parentSpanId).toBe(runs[i]!.spanId);
    expect(runs[2]!.attributes).toMatchObject({
      'zoott.world': world,
      'zoott.task.type': 'step',
      'zoott.task.key': 'top|mid|leaf',
      'zoott.task.attempt': 1,
      'zoott.worker': `${world}-w`,
      'zoott.task.outcome': 'completed',
    });
  });

  it('sends OTLP/HTTP protobuf by default, as the specification says', async () => {
    await treeThroughWorker('proto', {});
    const posts = receiver.requests.filter((r) => r.path === '/v1/traces');
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((r) => r.contentType === 'application/x-protobuf')).toBe(true);
    // Strings travel as themselves in protobuf: the service, the spans' names and their keys.
    const body = Buffer.concat(posts.map((r) => r.body)).toString('latin1');
    for (const text of ['zoott-worker', 'run step', 'top|mid|leaf']) expect(body).toContain(text);
  });

  it('refuses a protocol it has no exporter for, naming the variable (exit 2)', async () => {
    const engine = createEngine(suite.client, { world: 'grpc' });
    await engine.init();
    const worker = suite.start(
      ['--connect', suite.ns, '--world', 'grpc', '--handlers', handlers, '--trace'],
      { env: { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' } },
    );
    expect((await worker.exited).code).toBe(2);
    expect(worker.output()).toContain('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: grpc is not supported');
  });
});
