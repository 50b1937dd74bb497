import {
  type Claim,
  createEngine,
  runWorker,
  type SettleOutcome,
  type TaskError,
  type WorkerFailedEvent,
} from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from './helpers.js';

const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };

const circular: Record<string, unknown> = { a: 1 };
circular.self = circular;

/**
 * Every way a handler's result can fail to be stored, and the error the task must fail with:
 * the same `{ code, message }` in the worker's `failed` event, the settle listener's outcome
 * and the failed record.
 */
const UNSTORABLE: { name: string; result: () => unknown; code: string; message: RegExp }[] = [
  {
    name: 'too-large',
    result: () => 'x'.repeat(4096),
    code: 'DATA_TOO_LARGE',
    message: /result is \d+ bytes of JSON, more than the limit of 2048/,
  },
  {
    name: 'circular',
    result: () => circular,
    code: 'RESULT_NOT_JSON',
    message: /result is not JSON: .*circular/i,
  },
  {
    name: 'bigint',
    result: () => ({ n: 10n }),
    code: 'RESULT_NOT_JSON',
    message: /result is not JSON: .*BigInt/,
  },
  {
    name: 'top-bigint',
    result: () => 10n,
    code: 'RESULT_NOT_JSON',
    message: /result is not JSON: .*BigInt/,
  },
  {
    name: 'function',
    result: () => () => 1,
    code: 'RESULT_NOT_JSON',
    message: /result is not JSON: a function/,
  },
  {
    name: 'symbol',
    result: () => Symbol('s'),
    code: 'RESULT_NOT_JSON',
    message: /result is not JSON: a symbol/,
  },
  {
    name: 'tojson-throws',
    result: () => ({
      toJSON() {
        throw new Error('no way to write me');
      },
    }),
    code: 'RESULT_NOT_JSON',
    message: /result is not JSON: no way to write me/,
  },
];

describeOnBackends('engine: the reason a task failed', (backend) => {
  it('a result that cannot be stored fails the task with the real reason, everywhere', async () => {
    const c = await backend().connect();
    const world = worldName();
    const settled: { key: string; outcome: SettleOutcome }[] = [];
    const engine = createEngine(c, {
      world,
      buckets: 4,
      logger: memoryLogger(),
      maxRecordBytes: 2048,
      onSettled: (claim: Claim, outcome) => void settled.push({ key: claim.name, outcome }),
    });
    await engine.init();
    for (const u of UNSTORABLE)
      await engine.queue({ name: u.name, type: 'unstorable', maxAttempts: 1 });
    const worker = runWorker(
      c,
      { unstorable: (t) => UNSTORABLE.find((u) => u.name === t.name)!.result() },
      { world, engine, logger: memoryLogger(), ...fast },
    );
    const failed: WorkerFailedEvent[] = [];
    worker.on('failed', (e) => failed.push(e));
    await eventually(() => failed.length === UNSTORABLE.length);
    await worker.stop();
    for (const u of UNSTORABLE) {
      const expected = { code: u.code, message: expect.stringMatching(u.message) };
      const event = failed.find((e) => e.name === u.name)!;
      expect(event.error, u.name).toEqual(expected);
      expect(event.final).toBe(true);
      const outcome = settled.find((s) => s.key === u.name)?.outcome;
      expect(outcome, u.name).toEqual({ status: 'failed', error: expected });
      const record = await engine.task([u.name]);
      expect(record?.state).toBe('failed');
      expect(record?.error, u.name).toEqual(expected);
    }
  });

  it("a handler's error keeps its own code; one without a code gets HANDLER_ERROR", async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    const errors: Record<string, unknown> = {
      plain: new Error('plain boom'),
      coded: Object.assign(new Error('no such file'), { code: 'ENOENT' }),
      text: 'a thrown string',
      object: { message: 'an error-like object', code: 42 },
    };
    for (const name of Object.keys(errors))
      await engine.queue({
        name,
        type: 'thrower',
        maxAttempts: 2,
        backoff: { baseMs: 0, maxMs: 0 },
      });
    const worker = runWorker(
      c,
      {
        thrower: (t) => {
          throw errors[t.name];
        },
      },
      { world, engine, logger: memoryLogger(), ...fast },
    );
    const failed: WorkerFailedEvent[] = [];
    worker.on('failed', (e) => failed.push(e));
    await eventually(() => failed.filter((e) => e.final).length === 4);
    await worker.stop();
    const expected: Record<string, TaskError> = {
      plain: { code: 'HANDLER_ERROR', message: 'plain boom' },
      coded: { code: 'ENOENT', message: 'no such file' },
      text: { code: 'HANDLER_ERROR', message: 'a thrown string' },
      object: { code: '42', message: 'an error-like object' },
    };
    for (const [name, error] of Object.entries(expected)) {
      // The first attempt's event, the retry's event and the record all say the same.
      const events = failed.filter((e) => e.name === name);
      expect(events.map((e) => e.final)).toEqual([false, true]);
      for (const e of events) expect(e.error, name).toMatchObject(error);
      expect((await engine.task([name]))?.error, name).toMatchObject(error);
    }
  });
});
