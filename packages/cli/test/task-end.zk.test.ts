import { createEngine, runWorker } from '@zoott/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshWorld, json, session, start, stopTree, until } from './helpers.js';

// How a task ended, through the real `zoott` binary on a real ZooKeeper: the reason a task
// failed, as `show` and `watch` print it.
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

describe('watch: every transition, a failure with its reason', { timeout: SLOW }, () => {
  it("prints each task's events once and in order, failed and retried with CODE: message", async () => {
    const { connect, z } = await freshWorld();
    const c = await session(connect);
    const engine = createEngine(c, { world: 'tw', maxRecordBytes: 2048 });
    const text = start(['--connect', connect, '--world', 'tw', 'watch']);
    const lines = start(['--connect', connect, '--world', 'tw', '--json', 'watch']);
    try {
      // Live once it says so: every change after the line is reported.
      await until(() => text.err().includes('watching world tw'), 'the text watch to be live');
      await until(() => lines.err().includes('watching world tw'), 'the JSON watch to be live');
      const n = 40;
      await engine.queueMany(
        Array.from({ length: n }, (_, i) => ({
          name: `t${i}`,
          type: 'r',
          maxAttempts: 2,
          backoff: { baseMs: 0, maxMs: 0 },
        })),
      );
      const worker = runWorker(
        c,
        // t0 fails once (then completes), t1 returns what cannot be stored (twice: dead).
        {
          r: (t) => {
            if (t.name === 't0' && t.attempt === 1) throw new Error('not yet');
            return t.name === 't1' ? { n: 10n } : t.name;
          },
        },
        { world: 'tw', engine, concurrency: 8, pollMs: 200 },
      );
      try {
        await until(async () => {
          const counts = await engine.counts();
          return counts.completed === n - 1 && counts.failed === 1;
        }, 'every task to end');
      } finally {
        await worker.stop();
      }
      const events = () =>
        lines
          .out()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { type: string; key: string; error?: unknown });
      await until(
        () => events().filter((e) => e.type === 'completed' || e.type === 'failed').length === n,
        'every end in the JSON watch',
      );
      const byKey = (key: string) => events().filter((e) => e.key === key);
      expect(byKey('t0').map((e) => e.type)).toEqual([
        'queued',
        'started',
        'retried',
        'started',
        'completed',
      ]);
      expect(byKey('t0')[2]?.error).toEqual({ code: 'HANDLER_ERROR', message: 'not yet' });
      expect(byKey('t1').map((e) => e.type)).toEqual([
        'queued',
        'started',
        'retried',
        'started',
        'failed',
      ]);
      expect(byKey('t1')[4]?.error).toMatchObject({
        code: 'RESULT_NOT_JSON',
        message: expect.stringMatching(/BigInt/),
      });
      for (let i = 2; i < n; i++)
        expect(
          byKey(`t${i}`).map((e) => e.type),
          `t${i}`,
        ).toEqual(['queued', 'started', 'completed']);
      await until(
        () => /failed\s+t1 RESULT_NOT_JSON: result is not JSON/.test(text.out()),
        'the text line',
      );
      expect(text.out()).toMatch(/retried\s+t0 HANDLER_ERROR: not yet/);
    } finally {
      stopTree(text, 'SIGINT');
      stopTree(lines, 'SIGINT');
    }
    expect((await text.exited).code).toBe(130);
    void z;
  });
});
