import { type ClaimGate, createEngine, type Op } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { counting, memoryLogger, TestClock, worldName } from './helpers.js';

/** Claim multis create working nodes; completion multis create completed records. */
const claimsIn = (ops: readonly Op[]) =>
  ops.filter((o) => o.op === 'create' && o.path.includes('/zoott_w/')).length;
const completionsIn = (ops: readonly Op[]) =>
  ops.filter((o) => o.op === 'create' && o.path.includes('/zoott_c/')).length;

describeOnBackends('engine: group commit of claims and completions', (backend) => {
  async function world(names: string[]) {
    const producerC = await backend().connect();
    const name = worldName();
    const producer = createEngine(producerC, { world: name, buckets: 1, logger: memoryLogger() });
    await producer.init();
    for (const n of names) await producer.queue({ name: n, type: 't' });
    const wire = counting(await backend().connect());
    const worker = createEngine(wire.c, { world: name, logger: memoryLogger() });
    return { producer, worker, wire, name };
  }

  it('claims several runnable tasks in one multi and completes those that finish together in one', async () => {
    const { producer, worker, wire } = await world(['a', 'b', 'c', 'd', 'e']);
    const claims = await worker.claimMany(5, { worker: 'w' });
    expect(claims.map((c) => c.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(wire.ops.map(claimsIn).filter((n) => n > 0)).toEqual([5]);
    const outs = await Promise.all(claims.map((c) => worker.complete(c, c.name)));
    expect(outs).toEqual(claims.map(() => ({ status: 'completed' })));
    // The first goes out alone, at once; the four that came while it was in flight, together.
    expect(wire.ops.map(completionsIn).filter((n) => n > 0)).toEqual([1, 4]);
    for (const c of claims)
      expect(await producer.task([c.name])).toMatchObject({ state: 'completed', result: c.name });
  });

  it('a lone completion is sent at once, alone', async () => {
    const { worker, wire } = await world(['a']);
    const claim = await worker.claim({ worker: 'w' });
    expect(await worker.complete(claim!, 1)).toEqual({ status: 'completed' });
    expect(wire.ops.map(completionsIn).filter((n) => n > 0)).toEqual([1]);
  });

  it('no completion waits for a timer: with a clock whose sleeps never end, all still settle', async () => {
    const producerC = await backend().connect();
    const name = worldName();
    const producer = createEngine(producerC, { world: name, buckets: 1, logger: memoryLogger() });
    await producer.init();
    for (const n of ['a', 'b', 'c']) await producer.queue({ name: n, type: 't' });
    const clock = new TestClock();
    clock.sleep = () => new Promise<void>(() => {});
    const worker = createEngine(await backend().connect(), {
      world: name,
      clock,
      logger: memoryLogger(),
    });
    const [first, ...rest] = await worker.claimMany(3, { worker: 'w' });
    expect(await worker.complete(first!, 1)).toEqual({ status: 'completed' });
    const outs = await Promise.all(rest.map((c) => worker.complete(c, 2)));
    expect(outs).toEqual([{ status: 'completed' }, { status: 'completed' }]);
  });

  it('a fenced completion inside a group is dropped; the others in it complete', async () => {
    const { producer, worker, wire } = await world(['a', 'b', 'c', 'd']);
    const claims = await worker.claimMany(4, { worker: 'w' });
    // `c` is cancelled and queued again while its claim runs: that claim is stale.
    await producer.cancel(['c']);
    await producer.queue({ name: 'c', type: 't' });
    const outs = await Promise.all(claims.map((c) => worker.complete(c, c.name)));
    expect(outs.map((o) => o.status)).toEqual(['completed', 'completed', 'dropped', 'completed']);
    // The group of b, c, d was refused as a whole, then each went alone.
    expect(wire.ops.map(completionsIn).filter((n) => n > 0)).toEqual([1, 3, 1, 1, 1]);
    expect(wire.counts.errors['multi:NO_NODE']).toBe(2);
    for (const n of ['a', 'b', 'd'])
      expect(await producer.task([n])).toMatchObject({ state: 'completed', result: n });
    expect(await producer.task(['c'])).toMatchObject({ state: 'pending', attempts: 0 });
  });

  /** Tasks a-d claimed in one multi and completed together, each with `extras(name)`. */
  async function completedWithExtras(extras: (name: string) => Op[]) {
    const { producer, worker, wire } = await world(['a', 'b', 'c', 'd']);
    await producer.coordinator.create('/side');
    const claims = await worker.claimMany(4, { worker: 'w' });
    const outs = await Promise.all(
      claims.map((c) => worker.complete(c, c.name, { extraOps: extras(c.name) })),
    );
    return { producer, wire, claims, outs };
  }

  it('completions with extra ops join a group; each gets the results of its own extras', async () => {
    const { producer, wire, claims, outs } = await completedWithExtras((name) => [
      { op: 'create', path: `/side/${name}-`, sequential: true },
      { op: 'check', path: '/side', version: 0 },
    ]);
    expect(wire.ops.map(completionsIn).filter((n) => n > 0)).toEqual([1, 3]);
    for (const [i, out] of outs.entries()) {
      const name = claims[i]!.name;
      expect(out.status).toBe('completed');
      expect(out.extras?.applied).toBe(true);
      const results = out.extras?.applied ? out.extras.results : null;
      expect(results).toHaveLength(2);
      expect(results?.[0]).toMatchObject({
        op: 'create',
        path: expect.stringMatching(`^/side/${name}-\\d{10}$`),
      });
      expect(results?.[1]).toEqual({ op: 'check' });
    }
    for (const c of claims)
      expect(await producer.task([c.name])).toMatchObject({ state: 'completed', result: c.name });
  });

  it('an extra op that fails its group: that task completes without its extras, the others with', async () => {
    const { producer, wire, claims, outs } = await completedWithExtras((name) => [
      { op: 'create', path: name === 'c' ? '/missing/c' : `/side/${name}` },
    ]);
    expect(outs.map((o) => [o.status, o.extras?.applied])).toEqual([
      ['completed', true],
      ['completed', true],
      ['completed', false],
      ['completed', true],
    ]);
    // The group of b, c, d was refused for c's extra, then each went alone (c twice: with its
    // extra, then without).
    expect(wire.ops.map(completionsIn).filter((n) => n > 0)).toEqual([1, 3, 1, 1, 1, 1]);
    expect((await producer.coordinator.children('/side')).sort()).toEqual(['a', 'b', 'd']);
    for (const c of claims)
      expect(await producer.task([c.name])).toMatchObject({ state: 'completed', result: c.name });
  });

  it('a fenced claim inside a group is dropped; the others in it are claimed', async () => {
    const { producer, worker, wire, name } = await world(['a', 'b', 'c', 'd', 'e']);
    // The worker reads every entry ahead and claims `a`; its cache still has `b` unclaimed.
    expect((await worker.claim({ worker: 'w' }))?.name).toBe('a');
    const other = createEngine(await backend().connect(), { world: name, logger: memoryLogger() });
    expect((await other.claim({ worker: 'other' }))?.name).toBe('b');
    const claims = await worker.claimMany(3, { worker: 'w' });
    expect(claims.map((c) => c.name).sort()).toEqual(['c', 'd', 'e']);
    // The group b, c, d was refused at `b` (claimed by `other`); c and d went alone, then e.
    expect(wire.ops.map(claimsIn).filter((n) => n > 0)).toEqual([1, 3, 1, 1, 1]);
    expect(wire.counts.errors['multi:BAD_VERSION']).toBe(1);
    expect(await producer.task(['b'])).toMatchObject({
      state: 'working',
      attempts: 1,
      worker: { worker: 'other' },
    });
    for (const c of claims)
      expect(await producer.task([c.name])).toMatchObject({ state: 'working', attempts: 1 });
  });

  it('groups are bounded: 32 claims, 64 completions, half the request limit in bytes', async () => {
    const names = Array.from({ length: 70 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    const { worker, wire } = await world(names);
    const options = { worker: 'w', lookahead: 64 };
    const claims = await worker.claimMany(40, options);
    expect(wire.ops.map(claimsIn).filter((n) => n > 0)).toEqual([32, 8]);
    claims.push(...(await worker.claimMany(30, options)));
    expect(claims).toHaveLength(70);
    wire.ops.length = 0;
    await Promise.all(claims.slice(0, 66).map((c) => worker.complete(c, 1)));
    expect(wire.ops.map(completionsIn).filter((n) => n > 0)).toEqual([1, 64, 1]);
    // Results of 200 KB: two fit a group's byte budget (512 KiB), three do not.
    wire.ops.length = 0;
    const big = 'x'.repeat(200_000);
    await Promise.all(claims.slice(66).map((c) => worker.complete(c, big)));
    expect(wire.ops.map(completionsIn).filter((n) => n > 0)).toEqual([1, 2, 1]);
  });

  it('a claim of a group that does not happen gives its rate-limit start back', async () => {
    const { producer, worker, name } = await world(['a', 'b', 'c', 'd']);
    const starts = { taken: 0, refunded: [] as string[] };
    const gate: ClaimGate = {
      open: () => true,
      take: () => {
        starts.taken++;
        return true;
      },
      refund: (type) => void starts.refunded.push(type),
      nextAt: (_type, now) => now,
    };
    const options = { worker: 'w', gate };
    expect((await worker.claimMany(1, options)).map((c) => c.name)).toEqual(['a']);
    const other = createEngine(await backend().connect(), { world: name, logger: memoryLogger() });
    expect((await other.claim({ worker: 'other' }))?.name).toBe('b');
    // The group b, c, d: `b` is refused (claimed by `other`), c and d are claimed.
    const claims = await worker.claimMany(3, options);
    expect(claims.map((c) => c.name).sort()).toEqual(['c', 'd']);
    expect(starts).toEqual({ taken: 4, refunded: ['t'] });
    expect(await producer.task(['b'])).toMatchObject({ worker: { worker: 'other' } });
  });

  it('claimMany refuses a count that is not a positive integer', async () => {
    const { worker } = await world([]);
    await expect(worker.claimMany(0)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(worker.claimMany(1.5)).rejects.toThrow(/max 1.5: must be an integer >= 1/);
  });
});
