import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, type Engine } from '@zoott/core';
import { settled, until } from '@zoott/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { processSuite, registered } from './worker-bin.js';

// The worker's log as an operator reads it: the built binary's JSON lines, one per task
// transition, on a real ZooKeeper.

interface Line {
  level: number;
  msg: string;
  world?: string;
  key?: string;
  type?: string;
  attempt?: number;
  worker?: string;
  [field: string]: unknown;
}

const WARN = 40;
const ERROR = 50;

describe('worker task logs', { timeout: 120_000 }, () => {
  const suite = processSuite('logs');
  let handlers: string;

  beforeAll(async () => {
    handlers = join(suite.dir, 'handlers.mjs');
    writeFileSync(
      handlers,
      [
        "export function flaky() { throw new Error('boom: the disk is full'); }",
        'export function fine(task) { return { ok: task.name }; }',
        // Ignores its abort signal, so a cancel lands while it still runs.
        'export async function slow() { await new Promise((r) => setTimeout(r, 1500)); return 1; }',
        // Results that cannot be stored: the task fails with the engine's reason.
        'export function bigint() { return { n: 10n }; }',
        "export function huge() { return 'x'.repeat(1_000_000); }",
        'export function circular() { const o = {}; o.self = o; return o; }',
        '',
      ].join('\n'),
    );
  });

  async function worker(world: string, extra: string[] = []) {
    const engine = createEngine(suite.client, { world });
    await engine.init();
    const child = suite.start([
      ...['--connect', suite.ns, '--world', world, '--node-id', `${world}-w`],
      ...['--handlers', handlers, ...extra],
    ]);
    const lines = (): Line[] =>
      child
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
    await registered(suite.client, world);
    return { engine, lines, output: child.output };
  }

  async function retriedThenDead(engine: Engine, name: string) {
    const [q] = await engine.queue({ name, type: 'flaky' }, null, null, {
      maxAttempts: 3,
      backoff: { baseMs: 50, maxMs: 100 },
    });
    const rec = await settled(suite.client, engine.world, q!.key);
    expect(rec.state).toBe('failed');
  }

  it('logs one line per transition of a retried then dead-lettered task, and of a completed one', async () => {
    const { engine, lines } = await worker('logs');
    await retriedThenDead(engine, 'f1');
    const [ok] = await engine.queue({ name: 'o1', type: 'fine' });
    await settled(suite.client, 'logs', ok!.key);
    await until('the last lines', () =>
      lines().some((l) => l.key === 'o1' && l.msg === 'task completed') &&
      lines().some((l) => l.key === 'f1' && /dead-lettered/.test(l.msg))
        ? true
        : undefined,
    );

    const f1 = lines().filter((l) => l.key === 'f1');
    expect(f1.map((l) => [l.msg, l.attempt])).toEqual([
      ['task started', 1],
      ['task attempt failed, will retry', 1],
      ['task started', 2],
      ['task attempt failed, will retry', 2],
      ['task started', 3],
      ['task failed for good (dead-lettered)', 3],
    ]);
    for (const l of f1)
      expect(l).toMatchObject({ world: 'logs', key: 'f1', type: 'flaky', worker: 'logs-w' });
    const retry = f1[1]!;
    expect(retry.level).toBe(WARN);
    expect(retry.error).toBe('boom: the disk is full');
    expect(retry.nextAttempt).toBe(2);
    expect(Date.parse(String(retry.notBefore))).toBeGreaterThan(0);
    expect(retry.code).toBe('HANDLER_ERROR');
    expect(f1[5]).toMatchObject({
      level: ERROR,
      code: 'HANDLER_ERROR',
      error: 'boom: the disk is full',
      maxAttempts: 3,
    });

    const o1 = lines().filter((l) => l.key === 'o1');
    expect(o1.map((l) => l.msg)).toEqual(['task started', 'task completed']);
    expect(typeof o1[1]!.durationMs).toBe('number');
  });

  it('logs the reason a result could not be stored, as code and message', async () => {
    const { engine, lines } = await worker('unstorable');
    const expected: Record<string, { code: string; error: RegExp }> = {
      bigint: { code: 'RESULT_NOT_JSON', error: /^result is not JSON: .*BigInt/ },
      circular: { code: 'RESULT_NOT_JSON', error: /^result is not JSON: .*circular/i },
      huge: { code: 'DATA_TOO_LARGE', error: /^result is \d+ bytes of JSON, more than the limit/ },
    };
    for (const type of Object.keys(expected)) {
      const [q] = await engine.queue({ name: `u-${type}`, type, maxAttempts: 1 });
      expect((await settled(suite.client, 'unstorable', q!.key)).state).toBe('failed');
    }
    for (const [type, want] of Object.entries(expected)) {
      const line = await until(`the dead letter line of ${type}`, () =>
        lines().find((l) => l.key === `u-${type}` && /dead-lettered/.test(l.msg)),
      );
      expect(line, type).toMatchObject({ level: ERROR, code: want.code });
      expect(line.error, type).toMatch(want.error);
    }
  });

  it('logs a task cancelled while it runs', async () => {
    const { engine, lines } = await worker('cancels');
    const [q] = await engine.queue({ name: 's1', type: 'slow' });
    await until('s1 to start', () =>
      lines().some((l) => l.key === 's1' && l.msg === 'task started') ? true : undefined,
    );
    await engine.cancel(q!.key);
    await until('the cancellation line', () =>
      lines().find((l) => l.key === 's1' && /cancelled/.test(l.msg)),
    );
    expect(
      lines()
        .filter((l) => l.key === 's1')
        .map((l) => l.msg),
    ).toEqual(['task started', 'task cancelled while running; result dropped']);
  });

  it('--log-level warn keeps only the failures', async () => {
    const { engine, lines } = await worker('quiet', ['--log-level', 'warn']);
    await retriedThenDead(engine, 'f2');
    const [ok] = await engine.queue({ name: 'o2', type: 'fine' });
    await settled(suite.client, 'quiet', ok!.key);
    await until('the dead letter line', () =>
      lines().some((l) => l.key === 'f2' && /dead-lettered/.test(l.msg)) ? true : undefined,
    );
    const taskLines = lines().filter((l) => l.key !== undefined);
    expect(taskLines.map((l) => [l.key, l.msg])).toEqual([
      ['f2', 'task attempt failed, will retry'],
      ['f2', 'task attempt failed, will retry'],
      ['f2', 'task failed for good (dead-lettered)'],
    ]);
    expect(lines().every((l) => l.level >= WARN)).toBe(true);
  });
});
