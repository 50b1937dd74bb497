import { createEngine, runWorker } from '@zoott/core';
import { startProxy } from '@zoott/zk-testkit';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, freshWorld, json, session, start, stopTree, until } from './helpers.js';

// How a task ended, through the real `zoott` binary on a real ZooKeeper: the reason a task
// failed, as `show` and `watch` print it, and `wait --task`, which waits for one task's end.
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

describe('wait --task: one task to its end, through the real binary', { timeout: SLOW }, () => {
  it('completed: prints the result and exits 0, for a task another process queued', async () => {
    const { connect, z } = await freshWorld();
    // Queued by another process: the CLI, as the help example's task.
    expect((await z(['queue', 'requestFile_a', '-t', 'fetch'])).code).toBe(0);
    expect(
      (await z(['queue', 'downloadFile_a', '-t', 'fetch', '--parent', 'requestFile_a'])).code,
    ).toBe(0);
    const text = start([
      '--connect',
      connect,
      '--world',
      'tw',
      'wait',
      '--task',
      'requestFile_a|downloadFile_a',
      '--timeout',
      '600',
    ]);
    const asJson = start([
      '--connect',
      connect,
      '--world',
      'tw',
      '--json',
      'wait',
      '--task',
      'requestFile_a/downloadFile_a',
    ]);
    await until(
      () => text.err().includes('task requestFile_a|downloadFile_a: pending (attempt 1)'),
      'the text wait to look',
    );
    await until(() => asJson.err().includes('pending (attempt 1)'), 'the JSON wait to look');
    const c = await session(connect);
    const worker = runWorker(c, { fetch: (t) => ({ got: t.name }) }, { world: 'tw', pollMs: 200 });
    try {
      const r = await text.exited;
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ got: 'downloadFile_a' });
      expect(r.stderr).toMatch(
        /waiting for task requestFile_a\|downloadFile_a in world tw \(up to 600 s\)/,
      );
      const j = await asJson.exited;
      expect(j.code, j.stderr).toBe(0);
      expect(json(j)).toEqual({
        key: 'requestFile_a|downloadFile_a',
        state: 'completed',
        type: 'fetch',
        attempts: 1,
        result: { got: 'downloadFile_a' },
      });
    } finally {
      await worker.stop();
    }
  });

  it('failed: exit 8 with CODE: message; cancelled: exit 5; no such task: 5; --timeout: 6', async () => {
    const { connect, z } = await freshWorld();
    const w = (args: string[]) => start(['--connect', connect, '--world', 'tw', ...args]);
    for (const name of ['bad', 'gone', 'slow'])
      expect((await z(['queue', name, '-t', 'r', '--attempts', '1'])).code).toBe(0);
    const bad = w(['wait', '--task', 'bad']);
    const badJson = w(['--json', 'wait', '--task', 'bad']);
    const gone = w(['wait', '--task', 'gone']);
    const slow = w(['wait', '--task', 'slow', '--timeout', '1']);
    for (const p of [bad, badJson, gone])
      await until(() => p.err().includes(': pending'), 'the waits to look');
    expect((await z(['cancel', 'gone'])).code).toBe(0);
    const g = await gone.exited;
    expect(g.code, g.stderr).toBe(5);
    expect(g.stderr).toMatch(/task gone was cancelled \(or removed\) before it ended/);
    const s = await slow.exited;
    expect(s.code, s.stderr).toBe(6);
    expect(s.stderr).toMatch(/task slow did not end within 1 s/);
    const c = await session(connect);
    const worker = runWorker(
      c,
      { r: (t) => (t.name === 'bad' ? { n: 10n } : 1) },
      { world: 'tw', pollMs: 200 },
    );
    try {
      const b = await bad.exited;
      expect(b.code, b.stderr).toBe(8);
      expect(b.stdout).toBe('');
      expect(b.stderr).toMatch(
        /task bad failed for good: RESULT_NOT_JSON: result is not JSON: .*BigInt/,
      );
      const bj = await badJson.exited;
      expect(bj.code).toBe(8);
      expect(json(bj)).toMatchObject({
        key: 'bad',
        state: 'failed',
        type: 'r',
        attempts: 1,
        error: { code: 'RESULT_NOT_JSON', message: expect.stringMatching(/BigInt/) },
      });
    } finally {
      await worker.stop();
    }
    const none = await z(['wait', '--task', 'nope']);
    expect(none.code).toBe(5);
    expect(none.stderr).toMatch(/no task nope in world tw/);
    const mixed = await z(['wait', 'rk', '--task', 'bad']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/--task waits for a task, not a reply path: drop <routingkey> rk/);
    const neither = await z(['wait']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/wait needs a <routingkey> \(a reply path\) or --task <task>/);
  });

  it('rides out a partition: the task completes while the waiter hears nothing', async () => {
    const { connect } = await freshWorld();
    const chroot = connect.slice(connect.indexOf('/'));
    const proxy = await startProxy(inject('zkConnect'));
    try {
      const c = await session(connect);
      const engine = createEngine(c, { world: 'tw' });
      await engine.queue({ name: 'p', type: 'r' });
      const waiter = start([
        '--connect',
        `${proxy.hostPort}${chroot}`,
        '--world',
        'tw',
        '--json',
        'wait',
        '--task',
        'p',
        '--timeout',
        '120',
      ]);
      await until(() => waiter.err().includes('task p: pending'), 'the wait to look');
      proxy.setPartitioned(true);
      await until(() => waiter.err().includes('lost the connection'), 'the wait to be cut off');
      const worker = runWorker(
        c,
        { r: () => 'done while away' },
        { world: 'tw', engine, pollMs: 200 },
      );
      await until(async () => (await engine.counts()).completed === 1, 'the task to complete');
      await worker.stop();
      proxy.setPartitioned(false);
      const r = await waiter.exited;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/connected to ZooKeeper again/);
      expect(json(r)).toMatchObject({ key: 'p', state: 'completed', result: 'done while away' });
    } finally {
      await proxy.close();
    }
  });
});
