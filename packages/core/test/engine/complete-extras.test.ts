import { type Coordinator, createEngine, type Engine, isZoottError, utf8 } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { counting, memoryLogger, worldName } from './helpers.js';

/** Over both adapters' node and request size limits (ZooKeeper's ~1 MiB jute.maxbuffer). */
const TOO_LARGE = 1_100_000;

describeOnBackends('engine: complete with extra ops', (backend) => {
  /** An initialised world with one task queued and claimed, and a side directory `/side`. */
  async function claimed(c: Coordinator, logger = memoryLogger()) {
    const engine: Engine = createEngine(c, { world: worldName(), buckets: 2, logger });
    await engine.init();
    await engine.queue({ name: 'job', type: 't' });
    if ((await c.exists('/side')) === null) await c.create('/side');
    const claim = await engine.claim({ worker: 'w' });
    expect(claim).not.toBeNull();
    const completedPath = (await engine.context()).layout.recordPath('c', ['job']);
    return { engine, claim: claim!, logger, completedPath };
  }

  it('commits the extra ops in the same multi as the completed record', async () => {
    const { c, ops } = counting(await backend().connect());
    const { engine, claim, completedPath } = await claimed(c);
    const before = ops.length;
    const out = await engine.complete(
      claim,
      { n: 1 },
      {
        extraOps: [
          { op: 'create', path: '/side/r-', data: utf8.encode('reply'), sequential: true },
        ],
      },
    );
    expect(out.status).toBe('completed');
    expect(out.extras).toEqual({
      applied: true,
      results: [{ op: 'create', path: expect.stringMatching(/^\/side\/r-\d{10}$/) }],
    });
    // One multi carried both the record and the extra create.
    expect(ops.length - before).toBe(1);
    expect(ops.at(-1)?.map((o) => `${o.op} ${o.path}`)).toEqual(
      expect.arrayContaining([`create ${completedPath}`, 'create /side/r-']),
    );
    // The reply came back, so the results are known (null only when a lost reply was recovered).
    const results = out.extras?.applied ? out.extras.results : null;
    if (!results) throw new Error('expected the extra ops to be applied with known results');
    expect((await c.children('/side')).map((n) => `/side/${n}`)).toEqual(
      results.map((r) => (r.op === 'create' ? r.path : r.op)),
    );
    expect(await engine.task(['job'])).toMatchObject({ state: 'completed', result: { n: 1 } });
  });

  it("each completion's outcome is the caller's own object, free to change", async () => {
    const c = await backend().connect();
    const { engine, claim } = await claimed(c);
    for (const name of ['job2', 'job3', 'job4']) await engine.queue({ name, type: 't' });
    const claims = [claim];
    for (let i = 0; i < 3; i++) claims.push((await engine.claim({ worker: 'w' }))!);
    // Together: the ones that wait for the first go out in one group commit.
    const outcomes = await Promise.all(claims.map((each, i) => engine.complete(each, i)));
    for (const outcome of outcomes) {
      expect(outcome).toEqual({ status: 'completed' });
      expect(Object.isFrozen(outcome)).toBe(false);
    }
    expect(new Set(outcomes).size).toBe(outcomes.length);
    await c.close();
  });

  it('a multi that fails on the completed record writes no extra op either', async () => {
    const c = await backend().connect();
    const { engine, claim, completedPath } = await claimed(c);
    // Someone else's record in the way: the record's create fails, a verdict on the claim.
    await c.create(completedPath, utf8.encode('{}'));
    const out = await engine.complete(claim, 'mine', {
      extraOps: [{ op: 'create', path: '/side/r-', sequential: true }],
    });
    expect(out.status).toBe('dropped');
    expect(out.extras).toBeUndefined();
    expect(await c.children('/side')).toEqual([]);
    expect((await engine.task(['job']))?.state).toBe('completed');
    expect((await c.get(completedPath)).data).toEqual(utf8.encode('{}'));
  });

  it('a claim whose session was lost completes nothing, extras included (fencing)', async () => {
    const worker = await backend().connect();
    const { engine, claim } = await claimed(worker);
    const observer = await backend().connect();
    await backend().expireSession(worker);
    const out = await engine.complete(claim, 'late', {
      extraOps: [{ op: 'create', path: '/side/r-', sequential: true }],
    });
    expect(out.status).toBe('dropped');
    expect(await observer.children('/side')).toEqual([]);
    const seen = createEngine(observer, { world: engine.world, logger: memoryLogger() });
    expect((await seen.task(['job']))?.state).toBe('pending');
  });

  it('completes without the extras when they are too large, and says so', async () => {
    const c = await backend().connect();
    const { engine, claim, logger } = await claimed(c);
    const out = await engine.complete(claim, 'done', {
      extraOps: [{ op: 'create', path: '/side/big', data: new Uint8Array(TOO_LARGE) }],
    });
    expect(out.status).toBe('completed');
    expect(out.extras?.applied).toBe(false);
    const error = out.extras?.applied === false ? out.extras.error : null;
    expect(isZoottError(error) && error.code).toBe('DATA_TOO_LARGE');
    expect(logger.lines).toContain(
      'completing without the extra ops: they made the completion multi fail',
    );
    expect(await c.exists('/side/big')).toBeNull();
    expect(await engine.task(['job'])).toMatchObject({ state: 'completed', result: 'done' });
  });

  it('an extra op refused by the server (NO_NODE) is not mistaken for fencing', async () => {
    const c = await backend().connect();
    const { engine, claim } = await claimed(c);
    const out = await engine.complete(claim, 'ok', {
      extraOps: [{ op: 'create', path: '/side/missing/child' }],
    });
    expect(out.status).toBe('completed');
    const error = out.extras?.applied === false ? out.extras.error : null;
    // Base ops: create record, delete entry, delete working; the extra is op 3.
    expect(isZoottError(error) && [error.code, error.opIndex]).toEqual(['NO_NODE', 3]);
    expect(await engine.task(['job'])).toMatchObject({ state: 'completed', result: 'ok' });
    expect(await engine.counts()).toEqual({ pending: 0, working: 0, completed: 1, failed: 0 });
  });
});
