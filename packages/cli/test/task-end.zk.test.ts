import { createEngine, runWorker } from '@zoott/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshWorld, json, session, until } from './helpers.js';

// How a task ended, through the real `zoott` binary on a real ZooKeeper: the reason a task
// failed, as `show` prints it.
const SLOW = 180_000;

beforeAll(assertBuilt);

const circular: Record<string, unknown> = {};
circular.self = circular;

describe('show: why a task failed', { timeout: SLOW }, () => {
  it('prints the code and the real message of each way a result cannot be stored', async () => {
    const { connect, z } = await freshWorld();
    const c = await session(connect);
    const results: Record<string, () => unknown> = {
      bigint: () => ({ n: 10n }),
      circular: () => circular,
      huge: () => 'x'.repeat(4096),
      fn: () => () => 1,
      thrown: () => {
        throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      },
    };
    const engine = createEngine(c, { world: 'tw', maxRecordBytes: 2048 });
    for (const name of Object.keys(results))
      await engine.queue({ name, type: 'r', maxAttempts: 1 });
    const worker = runWorker(
      c,
      { r: (t) => results[t.name]!() },
      { world: 'tw', engine, pollMs: 200 },
    );
    try {
      await until(
        async () => (await engine.counts()).failed === Object.keys(results).length,
        'every task to fail',
      );
    } finally {
      await worker.stop();
    }
    const expected: Record<string, [string, RegExp]> = {
      bigint: ['RESULT_NOT_JSON', /result is not JSON: Do not know how to serialize a BigInt/],
      circular: ['RESULT_NOT_JSON', /result is not JSON: Converting circular structure to JSON/],
      huge: ['DATA_TOO_LARGE', /result is \d+ bytes of JSON, more than the limit of 2048/],
      fn: ['RESULT_NOT_JSON', /result is not JSON: a function/],
      thrown: ['ENOENT', /no such file/],
    };
    for (const [name, [code, message]] of Object.entries(expected)) {
      const text = await z(['show', name]);
      expect(text.code, text.stderr).toBe(0);
      const line = text.stdout.split('\n').find((l) => l.startsWith('error'));
      expect(line, name).toMatch(new RegExp(`^error\\s+${code}: ${message.source}`));
      const shown = json<{ error: { code: string; message: string } }>(
        await z(['--json', 'show', name]),
      );
      expect(shown.error, name).toMatchObject({ code, message: expect.stringMatching(message) });
    }
  });
});
