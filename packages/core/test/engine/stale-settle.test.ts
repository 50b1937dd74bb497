import { type Claim, type Coordinator, createEngine, type Engine, utf8 } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from './helpers.js';

/**
 * The fence, exercised directly: a claim that is no longer the task's current one (the task
 * was given back and claimed again, retried, re-queued or cancelled since) is settled on
 * purpose, with its session still alive, so only the server-side checks of the settle multi
 * stand between it and the task. Each stale settle must be refused and change nothing.
 */

/** Every node of the world's areas and tree, with data and version: "nothing changed" is equality. */
async function snapshot(c: Coordinator, world: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string): Promise<void> => {
    const got = await c.get(path).catch(() => null);
    if (!got) return;
    out[path] = `v${got.stat.version} ${utf8.decode(got.data)}`;
    for (const child of await c.children(path).catch(() => [] as string[]))
      await walk(`${path}/${child}`);
  };
  await Promise.all(
    [`/zoott_${world}`, ...['p', 'w', 'c', 'f'].map((a) => `/zoott_${a}/${world}`)].map(walk),
  );
  return out;
}

type Settle = 'complete' | 'fail' | 'release';

function settle(engine: Engine, claim: Claim, how: Settle) {
  if (how === 'complete') return engine.complete(claim, 'stale result');
  if (how === 'fail') return engine.fail(claim, new Error('stale failure'));
  return engine.release(claim);
}

const SETTLES: readonly Settle[] = ['complete', 'fail', 'release'];

describeOnBackends('engine: settling a stale claim is refused and changes nothing', (backend) => {
  async function setup(sameSession = false) {
    const producerC = await backend().connect();
    const world = worldName();
    const producer = createEngine(producerC, { world, buckets: 2, logger: memoryLogger() });
    await producer.init();
    await producer.queue({ name: 'job', type: 't' }, null, null, {
      maxAttempts: 5,
      backoff: { baseMs: 0, maxMs: 0 },
    });
    const c1 = await backend().connect();
    const c2 = sameSession ? c1 : await backend().connect();
    const log1 = memoryLogger();
    const one = createEngine(c1, { world, logger: log1 });
    const two = createEngine(c2, { world, logger: memoryLogger() });
    const stale = await one.claim({ worker: 'one' });
    expect(stale?.attempt).toBe(1);
    return { producerC, producer, world, one, two, log1, stale: stale! };
  }

  /** Settles `stale` through `one` and checks it was refused with nothing written. */
  async function refused(
    s: Awaited<ReturnType<typeof setup>>,
    how: Settle,
  ): Promise<Record<string, string>> {
    const before = await snapshot(s.producerC, s.world);
    const out = await settle(s.one, s.stale, how);
    expect(out.status).toBe('dropped');
    if (how !== 'release') expect(s.log1.lines).toContain('result dropped: fenced');
    expect(await snapshot(s.producerC, s.world)).toEqual(before);
    return before;
  }

  for (const sameSession of [false, true]) {
    const who = sameSession ? 'another engine on the same session' : 'another worker';
    for (const how of SETTLES) {
      it(`${how}: given back and claimed again by ${who}`, async () => {
        const s = await setup(sameSession);
        // Given back: the entry keeps its name, only its version moves on.
        expect((await s.one.release(s.stale)).status).toBe('dropped');
        const fresh = await s.two.claim({ worker: 'two' });
        expect(fresh?.entryPath).toBe(s.stale.entryPath);
        expect(fresh?.workingPath).toBe(s.stale.workingPath);
        await refused(s, how);
        // The current claim is untouched and still settles.
        expect(await s.producer.task(['job'])).toMatchObject({
          state: 'working',
          worker: { worker: 'two' },
        });
        expect(await s.two.complete(fresh!, 'fresh')).toEqual({ status: 'completed' });
        expect(await s.producer.task(['job'])).toMatchObject({
          state: 'completed',
          result: 'fresh',
        });
      });
    }
  }

  for (const how of SETTLES) {
    it(`${how}: after the task was retried and claimed again`, async () => {
      const s = await setup();
      expect((await s.one.fail(s.stale, new Error('first'))).status).toBe('retrying');
      const fresh = await s.two.claim({ worker: 'two' });
      expect(fresh?.attempt).toBe(2);
      await refused(s, how);
      expect(await s.two.complete(fresh!, 'fresh')).toEqual({ status: 'completed' });
      expect(await s.producer.task(['job'])).toMatchObject({ state: 'completed', attempts: 2 });
    });

    it(`${how}: after it completed and the task was re-queued`, async () => {
      const s = await setup();
      expect((await s.one.complete(s.stale, 'first')).status).toBe('completed');
      await s.producer.queue({ name: 'job', type: 't' });
      expect((await s.producer.task(['job']))?.state).toBe('pending');
      await refused(s, how);
      // And once the re-queued task is claimed again, by the same engine.
      const fresh = await s.one.claim({ worker: 'one' });
      expect(fresh).not.toBeNull();
      await refused(s, how);
      expect(await s.one.complete(fresh!, 'fresh')).toEqual({ status: 'completed' });
      expect(await s.producer.task(['job'])).toMatchObject({ state: 'completed', result: 'fresh' });
    });

    it(`${how}: after its session expired and was renewed, with no claim since`, async () => {
      const s = await setup();
      const c1 = s.one.coordinator;
      await backend().expireSession(c1);
      await c1.renewSession();
      // Refused twice over: locally (another session) and on the server, where the working
      // node went with the old session (deleting it fails) while the entry is unchanged.
      await refused(s, how);
      expect(await s.producer.task(['job'])).toMatchObject({ state: 'pending', attempts: 1 });
    });

    it(`${how}: after the task was cancelled, and after it was queued and claimed again`, async () => {
      const s = await setup();
      await s.producer.cancel(['job']);
      await refused(s, how);
      expect(await s.producer.task(['job'])).toBeNull();
      await s.producer.queue({ name: 'job', type: 't' });
      const fresh = await s.two.claim({ worker: 'two' });
      expect(fresh?.attempt).toBe(1);
      await refused(s, how);
      expect(await s.two.complete(fresh!, 'fresh')).toEqual({ status: 'completed' });
    });
  }
});

describeOnBackends('engine: a claim from a stale cached entry', (backend) => {
  it('is refused and re-read: an attempt counted by a worker that died is not lost', async () => {
    const c = await backend().connect();
    const world = worldName();
    const producer = createEngine(c, { world, buckets: 1, logger: memoryLogger() });
    await producer.init();
    for (const name of ['a', 'b'])
      await producer.queue({ name, type: 't' }, null, null, { maxAttempts: 5 });
    // `two` reads both entries ahead (look-ahead) and claims `a`; `b` stays in its cache.
    const two = createEngine(await backend().connect(), { world, logger: memoryLogger() });
    expect((await two.claim({ worker: 'two' }))?.name).toBe('a');
    // `b` is claimed by a worker that dies: its attempt is counted, the listing is unchanged.
    const c1 = await backend().connect();
    const dead = await createEngine(c1, { world, logger: memoryLogger() }).claim({ worker: 'one' });
    expect(dead).toMatchObject({ name: 'b', attempt: 1 });
    await backend().expireSession(c1);
    const again = await two.claim({ worker: 'two' });
    expect(again).toMatchObject({ name: 'b', attempt: 2 });
    expect(await producer.task(['b'])).toMatchObject({ state: 'working', attempts: 2 });
  });
});
