import { type Coordinator, createEngine, RateLimits, setRateLimit } from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import { describe, expect, it } from 'vitest';
import { eventually, memoryLogger, TestClock, worldName } from '../engine/helpers.js';

/**
 * A claimer reads the clock, reads entries it has not seen, and then asks the gate again with
 * the time it read before the reads. Another look at the gate (the next claim call, the
 * worker's `rateLimit` view) may have come in between with a later time. Such a late look
 * must neither add that span again nor move the bucket's time back (which made the next look
 * add it again): a worker then started more than its share.
 */
describe('rate limits: a look with a time from before an await', () => {
  it('adds no span twice, and the next start is due from the latest look', async () => {
    const server = new MemoryServer();
    const raw = await server.connect();
    const engine = createEngine(raw, { world: worldName('g'), logger: memoryLogger() });
    await engine.init();
    await setRateLimit(engine, 'mail', '10/s');
    // One worker: 10/s, one start every 100 ms.
    const gate = new RateLimits(raw, engine.world, () => 1);
    await gate.refresh();
    expect(gate.take('mail', 0)).toBe(false);
    expect(gate.view('mail', 150)?.available).toBeCloseTo(1.5);
    // A look that read the clock at 50, before the look at 150.
    expect(gate.open('mail', 50)).toBe(true);
    expect(gate.take('mail', 150)).toBe(true);
    expect(gate.take('mail', 150)).toBe(false);
    // Half a start is free as of 150: the next is due at 200, even when asked with 100.
    expect(gate.nextAt('mail', 100)).toBe(200);
    expect(gate.take('mail', 199)).toBe(false);
    expect(gate.take('mail', 200)).toBe(true);
    await raw.close();
  });

  it("a claim call whose entry reads span a clock step starts no more than the step's share", async () => {
    const server = new MemoryServer();
    const raw = await server.connect();
    // Entry reads (gets) wait while `held` is set, as a slow server's would.
    let held: { release: () => void; promise: Promise<void> } | null = null;
    let waiting = 0;
    const c = new Proxy(raw, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop !== 'get') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<Coordinator['get']>) => {
          const h = held;
          if (h) {
            waiting++;
            await h.promise;
          }
          return target.get(...args);
        };
      },
    });
    const clock = new TestClock(0);
    const engine = createEngine(c, {
      world: worldName('r'),
      buckets: 1,
      clock,
      logger: memoryLogger(),
    });
    await engine.init();
    await setRateLimit(engine, 't', '10/s');
    for (const name of ['a', 'b', 'c']) await engine.queue({ name, type: 't' });
    const gate = new RateLimits(c, engine.world, () => 1);
    await gate.refresh();
    // The bucket starts empty at 0: one start is due every 100 ms.
    expect(gate.open('t', 0)).toBe(false);
    const claimer = await engine.claimer({ worker: 'w', gate }, () => {});

    let release = () => {};
    held = { release: () => release(), promise: new Promise<void>((r) => (release = r)) };
    // The claim call reads the clock at 0, lists the bucket and waits on its entry reads.
    const call = claimer.claimBatch([0], 3);
    await eventually(() => waiting === 3);
    clock.advance(100);
    // A look at 100 meanwhile (the worker's view): one start is free.
    expect(gate.view('t', 100)?.available).toBeCloseTo(1);
    held.release();
    held = null;
    // 100 ms at 10/s: one start, however late the reads that began at 0 came back.
    expect((await call).map((claim) => claim.name)).toHaveLength(1);
    expect(await claimer.claimBatch([0], 3)).toEqual([]);
    clock.advance(100);
    expect(await claimer.claimBatch([0], 3)).toHaveLength(1);
    claimer.close();
    await raw.close();
  });
});
