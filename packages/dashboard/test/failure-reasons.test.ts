import { createEngine, runWorker } from '@zoott/core';
import { type DashboardHandle, startDashboard } from '@zoott/dashboard';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assetsForFile, eventually, zkNamespace } from './helpers.js';

// A task that failed because its result could not be stored: the dashboard's failed list
// and task page get the engine's reason as { code, message }, as every other report does.

const WORLD = 'reasons';
const quiet = { warn: () => {} };
const assetsDir = assetsForFile();

const circular: Record<string, unknown> = {};
circular.self = circular;
const RESULTS: Record<string, () => unknown> = {
  bigint: () => ({ n: 10n }),
  circular: () => circular,
  huge: () => 'x'.repeat(4096),
  thrown: () => {
    throw new Error('the disk is full');
  },
};
const EXPECTED: Record<string, { code: string; message: RegExp }> = {
  bigint: { code: 'RESULT_NOT_JSON', message: /^result is not JSON: .*BigInt/ },
  circular: { code: 'RESULT_NOT_JSON', message: /^result is not JSON: .*circular/i },
  huge: { code: 'DATA_TOO_LARGE', message: /^result is \d+ bytes of JSON, more than the limit/ },
  thrown: { code: 'HANDLER_ERROR', message: /^the disk is full$/ },
};

describe('dashboard: why a task failed [zookeeper]', () => {
  let ns: Awaited<ReturnType<typeof zkNamespace>>;
  let dash: DashboardHandle;

  beforeAll(async () => {
    ns = await zkNamespace(inject('zkConnect'));
    const c = await ns.connect();
    const engine = createEngine(c, {
      world: WORLD,
      buckets: 2,
      logger: quiet,
      maxRecordBytes: 2048,
    });
    await engine.init();
    for (const name of Object.keys(RESULTS))
      await engine.queue({ name, type: 'result', maxAttempts: 1 });
    const worker = runWorker(
      c,
      { result: (t) => RESULTS[t.name]!() },
      { world: WORLD, engine, logger: quiet, pollMs: 200, stealAfterMs: 50 },
    );
    await eventually(async () =>
      (await engine.counts()).failed === Object.keys(RESULTS).length ? true : undefined,
    );
    await worker.stop();
    dash = await startDashboard({
      assetsDir: assetsDir(),
      coordinator: await ns.connect(),
      port: 0,
      logger: quiet,
      noToken: true,
    });
  });

  afterAll(async () => {
    await dash?.close();
    await ns?.close();
  });

  const get = async (path: string) => {
    const res = await fetch(new URL(path, dash.url));
    expect(res.status, path).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  it('the failed list and each task carry the code and the real message', async () => {
    const failed = (await get(`/api/failed?world=${WORLD}`)) as {
      tasks: { key: string[]; error: unknown }[];
    };
    expect(failed.tasks).toHaveLength(Object.keys(EXPECTED).length);
    for (const [name, want] of Object.entries(EXPECTED)) {
      const expected = { code: want.code, message: expect.stringMatching(want.message) };
      const listed = failed.tasks.find((t) => t.key[0] === name);
      expect(listed?.error, name).toMatchObject(expected);
      const task = await get(`/api/task?world=${WORLD}&key=${name}`);
      expect(task.error, name).toMatchObject(expected);
    }
  });
});
