import {
  type Claim,
  type Coordinator,
  createEngine,
  type EngineOptions,
  isPermanent,
  PermanentError,
  type SettleDetail,
  type SettleOutcome,
  utf8,
  ZoottError,
} from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { counting, memoryLogger, worldName } from './helpers.js';

interface Told {
  key: string;
  outcome: SettleOutcome;
  detail: SettleDetail;
}

describeOnBackends('engine: permanent errors and the settle hooks', (backend) => {
  /** A world with one task (3 attempts) claimed, every settle told into `told`. */
  async function claimed(c: Coordinator, extra: Partial<EngineOptions> = {}) {
    const told: Told[] = [];
    const logger = memoryLogger();
    const engine = createEngine(c, {
      world: worldName(),
      buckets: 2,
      logger,
      onSettled: (claim, outcome, detail) => {
        told.push({ key: claim.key.join('|'), outcome, detail });
      },
      ...extra,
    });
    await engine.init();
    await engine.queue({ name: 'job', type: 't', maxAttempts: 3 });
    const claim = await engine.claim({ worker: 'w' });
    if (!claim) throw new Error('expected a claim');
    return { engine, claim, told, logger };
  }

  it('dead-letters at once on a PermanentError, keeping maxAttempts for an operator retry', async () => {
    const c = await backend().connect();
    const { engine, claim, told } = await claimed(c);
    const error = new PermanentError('no such executable', 'EXEC_REFUSED');
    const out = await engine.fail(claim, error);
    expect(out.status).toBe('failed');
    expect(told).toEqual([{ key: 'job', outcome: out, detail: { error } }]);
    const record = await engine.task(['job']);
    expect(record).toMatchObject({ state: 'failed', attempts: 1, maxAttempts: 3 });
    expect(record?.error).toMatchObject({ message: 'no such executable', code: 'EXEC_REFUSED' });
  });

  it('retries an ordinary error, and dead-letters INVALID_JOB and `permanent: true` at once', async () => {
    expect(isPermanent(new PermanentError('x'))).toBe(true);
    expect(isPermanent(new ZoottError('INVALID_JOB', 'bad job'))).toBe(true);
    expect(isPermanent(Object.assign(new Error('x'), { permanent: true }))).toBe(true);
    expect(isPermanent(new ZoottError('INVALID_TASK', 'bad task'))).toBe(false);
    expect(isPermanent(new Error('transient'))).toBe(false);
    const c = await backend().connect();
    const { engine, claim } = await claimed(c);
    expect((await engine.fail(claim, new Error('transient'))).status).toBe('retrying');
    const other = await claimed(c);
    const invalid = new ZoottError('INVALID_JOB', 'bad job');
    expect((await other.engine.fail(other.claim, invalid)).status).toBe('failed');
  });

  it('tells onSettled of a completion with its result, a release and a forget', async () => {
    const c = await backend().connect();
    const first = await claimed(c);
    const out = await first.engine.complete(first.claim, { n: 1 });
    expect(first.told).toEqual([{ key: 'job', outcome: out, detail: { result: { n: 1 } } }]);
    const second = await claimed(c);
    const released = await second.engine.release(second.claim);
    expect(released).toEqual({ status: 'dropped', reason: 'released' });
    const again = (await second.engine.claim({ worker: 'w' })) as Claim;
    second.engine.forget(again);
    expect(second.told).toEqual([
      { key: 'job', outcome: released, detail: {} },
      { key: 'job', outcome: { status: 'dropped', reason: 'session lost' }, detail: {} },
    ]);
  });

  it('awaits onSettled before the settle returns, and logs what it throws', async () => {
    const c = await backend().connect();
    let finished = false;
    const { engine, claim, logger } = await claimed(c, {
      onSettled: async () => {
        await new Promise<void>((resolve) => setImmediate(resolve));
        finished = true;
        throw new Error('listener bug');
      },
    });
    const out = await engine.complete(claim, 1);
    expect(out.status).toBe('completed');
    expect(finished).toBe(true);
    expect(logger.lines.join('\n')).toMatch(/onSettled listener failed/);
  });

  it("commits completionOps in the completion's multi, after the caller's extraOps", async () => {
    const { c, ops } = counting(await backend().connect());
    if ((await c.exists('/side')) === null) await c.create('/side');
    const seen: unknown[] = [];
    const { engine, claim } = await claimed(c, {
      completionOps: async (cl, result) => {
        seen.push([cl.key.join('|'), result]);
        return [{ op: 'create', path: '/side/hook', data: utf8.encode('h') }];
      },
    });
    const before = ops.length;
    const out = await engine.complete(
      claim,
      { n: 2 },
      { extraOps: [{ op: 'create', path: '/side/caller', data: utf8.encode('c') }] },
    );
    expect(seen).toEqual([['job', { n: 2 }]]);
    expect(out.extras).toMatchObject({ applied: true });
    expect(ops.length - before).toBe(1);
    const paths = ops.at(-1)!.map((o) => o.path);
    expect(paths.indexOf('/side/caller')).toBeLessThan(paths.indexOf('/side/hook'));
    expect((await c.children('/side')).sort()).toEqual(['caller', 'hook']);
  });
});
