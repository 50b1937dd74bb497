import {
  type Coordinator,
  createEngine,
  isZoottError,
  listRateLimits,
  type Op,
  parseRate,
  RateLimits,
  removeRateLimit,
  runWorker,
  setRateLimit,
  type WorkerHandle,
} from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import { describeOnBackends } from '@zoott/testing';
import { describe, expect, it } from 'vitest';
import { counting, eventually, memoryLogger, TestClock, worldName } from '../engine/helpers.js';

describe('parseRate', () => {
  it('reads per second, minute and hour', () => {
    expect(parseRate('20/s')).toEqual({ count: 20, perMs: 1000 });
    expect(parseRate('100/m')).toEqual({ count: 100, perMs: 60_000 });
    expect(parseRate('0.5/s')).toEqual({ count: 0.5, perMs: 1000 });
    expect(parseRate('3000/h')).toEqual({ count: 3000, perMs: 3_600_000 });
  });

  it.each([
    ['20', /expected <number>\/<s\|m\|h>/],
    ['20/d', /expected/],
    ['-1/s', /expected/],
    ['0/s', /more than zero/],
    ['2000000/s', /at most/],
  ])('refuses %s', (text, why) => {
    let err: unknown;
    try {
      parseRate(text);
    } catch (e) {
      err = e;
    }
    expect(isZoottError(err, 'INVALID_CONFIG')).toBe(true);
    expect(String(err)).toMatch(why);
  });
});

describeOnBackends('rate limits: storage', (backend) => {
  it('set, replace, list and remove; a bad rate writes nothing', async () => {
    const zk = await backend().connect();
    const engine = createEngine(zk, { world: worldName('rl'), logger: memoryLogger() });
    await engine.init();
    expect(await listRateLimits(engine)).toEqual([]);
    await setRateLimit(engine, 'mail', '20/s');
    await setRateLimit(engine, 'a/b', '5/m');
    await setRateLimit(engine, 'mail', '10/s');
    expect(await listRateLimits(engine)).toEqual([
      { type: 'a/b', rate: '5/m', count: 5, perMs: 60_000 },
      { type: 'mail', rate: '10/s', count: 10, perMs: 1000 },
    ]);
    await expect(setRateLimit(engine, 'x', 'fast')).rejects.toThrow(/rate "fast"/);
    await expect(setRateLimit(engine, '', '1/s')).rejects.toThrow(/type/);
    expect((await listRateLimits(engine)).map((l) => l.type)).toEqual(['a/b', 'mail']);
    expect(await removeRateLimit(engine, 'mail')).toBe(true);
    expect(await removeRateLimit(engine, 'mail')).toBe(false);
    expect((await listRateLimits(engine)).map((l) => l.type)).toEqual(['a/b']);
  });
});

describe('RateLimits (one worker side)', () => {
  it('shares the limit by the workers serving the type; no request per start', async () => {
    const server = new MemoryServer();
    const raw = await server.connect();
    const engine = createEngine(raw, { world: worldName('g'), logger: memoryLogger() });
    await engine.init();
    await setRateLimit(engine, 'mail', '10/s');
    const { c, counts } = counting(raw);
    let servers = 2;
    const gate = new RateLimits(c, engine.world, () => servers);
    await gate.refresh();
    const readsAfterRefresh = counts.reads;
    // 10/s over 2 workers: 5/s here, one start every 200 ms, starting empty (no burst).
    expect(gate.take('mail', 0)).toBe(false);
    expect(gate.nextAt('mail', 0)).toBe(200);
    expect(gate.take('mail', 200)).toBe(true);
    expect(gate.take('mail', 200)).toBe(false);
    expect(gate.open('other', 200)).toBe(true); // no limit
    expect(gate.take('other', 200)).toBe(true);
    // Idle for a long time: at most one start plus 200 ms of 5/s saved up, two in all.
    expect(gate.take('mail', 100_000)).toBe(true);
    expect(gate.take('mail', 100_000)).toBe(true);
    expect(gate.take('mail', 100_000)).toBe(false);
    // A worker joins: 10/s over 5 now, one start every 500 ms.
    servers = 5;
    expect(gate.nextAt('mail', 100_000)).toBe(100_500);
    gate.refund('mail');
    expect(gate.take('mail', 100_000)).toBe(true);
    expect(counts.reads).toBe(readsAfterRefresh);

    // A change of the limit is heard by the watch and read on the next refresh.
    expect(gate.dirty).toBe(false);
    await setRateLimit(engine, 'mail', '100/s');
    await eventually(() => gate.dirty);
    await gate.refresh();
    expect(gate.share('mail')).toBeCloseTo(100 / 5 / 1000);
    await removeRateLimit(engine, 'mail');
    await eventually(() => gate.dirty);
    await gate.refresh();
    expect(gate.share('mail')).toBeNull();
    await raw.close();
  });
});

/** How long one step may wait for the workers to catch up before the test fails. */
const STEP_DEADLINE_MS = 60_000;

describeOnBackends('workers under a rate limit (test clock)', (backend) => {
  // 90 clock steps, each waiting for real claims on a real server: the deadlines are failure
  // detectors sized for a loaded 2-core machine, not speed claims.
  it('start at most limit x time in total, as workers join and leave, and keep up with it', {
    timeout: 300_000,
  }, async () => {
    const clock = new TestClock(0);
    const world = worldName('w');
    const admin = createEngine(await backend().connect(), {
      world,
      buckets: 12,
      clock,
      logger: memoryLogger(),
    });
    await admin.init();
    await setRateLimit(admin, 't', '10/s');
    for (let i = 0; i < 300; i++) await admin.queue({ name: `r${i}`, type: 't' });
    const handles: WorkerHandle[] = [];
    // Claim multis sent and not back yet: a start whose token was taken but which does not
    // show in `stats.claimed` yet.
    let claimsOut = 0;
    const counted = (c: Coordinator): Coordinator =>
      new Proxy(c, {
        get(target, prop) {
          const value = Reflect.get(target, prop);
          if (prop !== 'multi') return typeof value === 'function' ? value.bind(target) : value;
          return async (ops: readonly Op[]) => {
            const claims = ops.some((o) => o.op === 'create' && o.path.includes('/zoott_w/'));
            if (claims) claimsOut++;
            try {
              return await target.multi(ops);
            } finally {
              if (claims) claimsOut--;
            }
          };
        },
      });
    const start = async () => {
      const h = runWorker(
        counted(await backend().connect()),
        { t: () => 'ok' },
        {
          world,
          clock,
          concurrency: 4,
          logger: memoryLogger(),
          scheduler: false,
        },
      );
      handles.push(h);
      return h;
    };
    const started = () => handles.reduce((n, h) => n + h.stats.claimed, 0);
    // Settled: the buckets are shared out and every worker's share is the limit over n.
    const settled = (n: number) =>
      eventually(
        () =>
          handles.every(
            (h) =>
              h.buckets.length === 12 / n &&
              Math.abs((h.rateLimit('t')?.perSecond ?? 0) - 10 / n) < 1e-9,
          ),
        STEP_DEADLINE_MS,
      );
    // Caught up: every worker has taken each start its bucket holds. The clock moves only
    // then, so a worker that a loaded machine runs late never sees starts pile up past its
    // bucket's cap (which would lose them and leave the total behind for good).
    // A start taken shows in `stats.claimed` once its claim multi is back, so both are waited for.
    const caughtUp = (atLeast: number) =>
      eventually(
        () => handles.every((h) => (h.rateLimit('t')?.available ?? 0) < 1) && started() >= atLeast,
        STEP_DEADLINE_MS,
      );
    /**
     * The starts so far, once every claim whose start was taken has come back: read at a phase
     * change, while the clock stands still and every bucket is empty (no new start can begin),
     * so a start taken in the phase before is never counted in the next.
     */
    const startsSoFar = async () => {
      await eventually(
        () => claimsOut === 0 && handles.every((h) => (h.rateLimit('t')?.available ?? 0) < 1),
        STEP_DEADLINE_MS,
      );
      return started();
    };
    /** What each worker has started and may start, for a failure's message. */
    const state = (allowed: number) =>
      `allowed ${allowed.toFixed(2)} since ${since} (base ${base}); per worker: ${handles
        .map((h) => {
          const v = h.rateLimit('t');
          return `${h.stats.claimed} started, ${v?.perSecond.toFixed(2)}/s, ${v?.available.toFixed(2)} free, ${h.buckets.length} buckets`;
        })
        .join('; ')}; claims out ${claimsOut}`;
    /** Moves the clock in steps; checks the bound at every step and that work keeps up. */
    const run = async (ms: number, step: number, workers: number) => {
      for (let t = 0; t < ms; t += step) {
        clock.advance(step);
        const allowed = (clock.now() - since) * 0.01 + base;
        // Never more than the limit allows (each worker may have saved up one start plus
        // 200 ms of its share when the phase began: two at 5/s, fewer at 3.3/s)...
        expect(started(), state(allowed)).toBeLessThanOrEqual(Math.floor(allowed) + 2 * workers);
        // ...and the workers keep up with it (each may hold less than one start back).
        await caughtUp(Math.floor(allowed) - workers);
        expect(started(), state(allowed)).toBeLessThanOrEqual(Math.floor(allowed) + 2 * workers);
      }
    };
    let since = 0;
    let base = 0;
    await start();
    await start();
    await settled(2);
    since = clock.now();
    base = await startsSoFar();
    await run(3000, 100, 2);
    // A third worker joins: the three shares still sum to the limit.
    await start();
    await settled(3);
    since = clock.now();
    base = await startsSoFar();
    await run(3000, 100, 3);
    // One leaves: the other two take over its share.
    await handles.shift()!.stop();
    await settled(2);
    since = clock.now();
    base = await startsSoFar();
    await run(3000, 100, 2);
    for (const h of handles) await h.stop();
  });
});
