import { type Coordinator, createEngine, updateRetention } from '@zoott/core';
import { Reaper } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { fourLetter } from '@zoott/zk-testkit';
import { expect, it } from 'vitest';
import { AREA } from '../../src/engine/layout.js';
import { counting, TestClock, worldName } from '../engine/helpers.js';

const HOUR = 3_600_000;
/** Retained records a newly elected reaper takes over. */
const N = 200;

/** Requests the server has received on `c`'s connection (its `cons` line for the session). */
async function received(server: string, c: Coordinator): Promise<number> {
  const sid = `sid=0x${c.sessionId!.replace(/^0+/, '')},`;
  const line = (await fourLetter(server, 'cons')).split('\n').find((l) => l.includes(sid));
  const recved = line?.match(/recved=(\d+)/)?.[1];
  if (recved === undefined) throw new Error(`no cons line for ${sid}`);
  return Number(recved);
}

describeOnBackends('retention: a newly elected reaper resumes', (backend) => {
  it(`takes over ${N} retained records in a bounded number of requests, not one per record`, async () => {
    // A long session: no ping lands between the two counts.
    const c = await backend().connect({ sessionTimeoutMs: 60_000 });
    // The engine's clock reads the wall clock's time, so the records' creation times (the
    // server's) are on it: the ages a resume reads are checked below.
    const clock = new TestClock(Date.now());
    const engine = createEngine(c, { world: worldName('resume'), buckets: 2, clock });
    await engine.init();
    await updateRetention(c, engine.world, { completed: { maxAgeMs: HOUR, maxCount: null } });
    for (let i = 0; i < N; i++) {
      await engine.queue({ name: `t${i}`, type: 't' });
      const claim = await engine.claim();
      if (!claim) throw new Error(`nothing to claim for t${i}`);
      await engine.complete(claim, 'ok');
    }
    clock.advance(HOUR / 2);
    const ctx = await engine.context();
    const path = await c.create(`${ctx.layout.registry}/worker-`, new Uint8Array(), {
      ephemeral: true,
      sequential: true,
    });
    const { c: counted, counts } = counting(c);
    const reaper = new Reaper({ ...ctx, coordinator: counted }, () => path);
    // The ZooKeeper adapter asks the server once per client whether it knows multiRead, and
    // reads one by one until it answered; a worker's client has long asked (it reads pending
    // entries), so this one asks before the count too.
    await Promise.all([c.get(ctx.layout.registry), c.get(path)]);
    const server = backend().connectString?.split('/')[0];
    const before = server ? await received(server, c) : 0;
    expect(await reaper.pass()).toMatchObject({ leader: true, records: 0, completedKept: N });
    // Calls that are one request each whatever the adapter (all but plain reads, which the
    // ZooKeeper adapter sends 32 to a request): the registry, the settings, the listings.
    const single = Object.entries(counts.byMethod)
      .filter(([m]) => m !== 'get')
      .reduce((a, [, n]) => a + n, 0);
    expect(single).toBeLessThanOrEqual(12);
    if (server) {
      const requests = (await received(server, c)) - before;
      expect(requests).toBeLessThanOrEqual(N / 16 + 12);
    }
    // The ages are the records' own, not the time of the resume: an hour after they were made
    // (a few minutes' margin for the time making them took), every one is due.
    clock.advance(HOUR / 2 + 300_000);
    expect(await reaper.pass()).toMatchObject({ records: N, skipped: 0, completedKept: 0 });
    await c.close();
  }, 120_000);

  it('does not index a record that is gone by the time the resume reads it', async () => {
    const c = await backend().connect();
    const clock = new TestClock(Date.now());
    const engine = createEngine(c, { world: worldName('resume'), buckets: 2, clock });
    await engine.init();
    for (const name of ['a', 'b', 'c']) {
      await engine.queue({ name, type: 't' });
      const claim = await engine.claim();
      if (!claim) throw new Error(`nothing to claim for ${name}`);
      await engine.complete(claim, 'ok');
    }
    const ctx = await engine.context();
    const path = await c.create(`${ctx.layout.registry}/worker-`, new Uint8Array(), {
      ephemeral: true,
      sequential: true,
    });
    // Each completed listing shows one more record, removed before the resume reads it.
    const completedDir = ctx.layout.bucketPath(AREA.completed, 0);
    const racing = new Proxy(c, {
      get(target, prop, receiver) {
        if (prop !== 'childrenWithStat') return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<Coordinator['childrenWithStat']>) => {
          const got = await target.childrenWithStat(...args);
          if (args[0] !== completedDir) return got;
          return { ...got, children: [...got.children, 'gone'] };
        };
      },
    });
    const reaper = new Reaper({ ...ctx, coordinator: racing }, () => path);
    expect(await reaper.pass()).toMatchObject({ leader: true, completedKept: 3 });
    await c.close();
  });
});
