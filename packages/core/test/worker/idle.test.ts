import { type Coordinator, createEngine, runWorker, type WorkerHandle } from '@zoott/core';
import { fnv1a32 } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  type CallCounts,
  counting,
  eventually,
  memoryLogger,
  TestClock,
  worldName,
} from '../engine/helpers.js';
import { CountingClock, idlePeriods } from './idle-clock.js';

const BUCKETS = 16;
/** Short, so many idle periods pass in little real time. */
const STEAL_AFTER_MS = 20;

/** A manual clock that counts sleeps (each yields to the event loop, time stands still). */
class CountingTestClock extends TestClock {
  sleeps = 0;
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps++;
    return super.sleep(ms, signal);
  }
}

const requests = (c: CallCounts) => c.reads + c.writes;

/**
 * Counts the requests a coordinator sends about the pending area (bucket listings, entry
 * reads, claims): what stealing costs, apart from the world's reaper, which reads the
 * completed area when tasks complete.
 */
function countingPending(c: Coordinator): {
  c: Coordinator;
  pending: () => number;
  /** The counted requests from the `from`-th on, one line each: what a failed budget spent. */
  calls: (from: number) => string;
} {
  let n = 0;
  const seen: string[] = [];
  const proxy = new Proxy(c, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const first = args[0];
        const ops = Array.isArray(first) ? (first as { path?: string }[]) : [];
        if (
          (typeof first === 'string' && first.startsWith('/zoott_p/')) ||
          ops.some((op) => op.path?.startsWith('/zoott_p/'))
        ) {
          n++;
          seen.push(
            `${String(prop)} ${typeof first === 'string' ? first : ops.map((o) => o.path).join(' ')}`,
          );
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { c: proxy, pending: () => n, calls: (from) => seen.slice(from).join('\n') };
}

/** Whether the counted requests hold an `op` on pending bucket `bucket`. */
function sentFor(calls: (from: number) => string, op: string, bucket: number): boolean {
  return calls(0)
    .split('\n')
    .some(
      (line) =>
        line.startsWith(`${op} /zoott_p/`) && line.endsWith(`/${String(bucket).padStart(4, '0')}`),
    );
}

/**
 * Waits until watcher b's first look at a's buckets is over: b has listed each of them and
 * (with tree watches) watches each of its own. Its requests go out in the background, so
 * counting them would let its own watches stand in for a listing still to go out.
 */
async function firstLookOver(
  a: WorkerHandle,
  b: WorkerHandle,
  calls: (from: number) => string,
  raw: Coordinator,
): Promise<void> {
  await eventually(
    () =>
      a.buckets.every((n) => sentFor(calls, 'childrenWithStat', n)) &&
      (raw.watchTree === undefined || b.buckets.every((n) => sentFor(calls, 'watchTree', n))),
  );
}

/** A task name whose bucket `worker` owns. */
function nameIn(worker: WorkerHandle, prefix: string): string {
  for (let i = 0; ; i++)
    if (worker.buckets.includes(fnv1a32(`${prefix}${i}`) % BUCKETS)) return `${prefix}${i}`;
}

/**
 * Worker b of the stealing tests: it runs `handlers` on a clock moved by hand, and its
 * requests about the pending area are counted. Resolves once it and `a` share out every bucket.
 */
async function startWatcher(
  raw: Coordinator,
  world: string,
  handlers: Record<string, () => string>,
  a: WorkerHandle,
  stealAfterMs: number,
): Promise<{
  b: WorkerHandle;
  clock: CountingTestClock;
  pending: () => number;
  calls: (from: number) => string;
}> {
  const clock = new CountingTestClock();
  const { c, pending, calls } = countingPending(raw);
  const b = runWorker(c, handlers, {
    world,
    clock,
    logger: memoryLogger(),
    stealAfterMs,
    pollMs: 200,
  });
  await eventually(
    () =>
      a.buckets.length > 0 &&
      b.buckets.length > 0 &&
      a.buckets.length + b.buckets.length === BUCKETS,
  );
  return { b, clock, pending, calls };
}

describeOnBackends('engine: idle workers stay quiet', (backend) => {
  it('three idle workers send no request over 100 idle periods, and still take new work at once', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: BUCKETS, logger: memoryLogger() });
    await engine.init();
    const opened: Coordinator[] = [producer];
    const workers: { handle: WorkerHandle; counts: CallCounts; clock: CountingClock }[] = [];
    for (let i = 0; i < 3; i++) {
      const raw = await backend().connect();
      opened.push(raw);
      const { c, counts } = counting(raw);
      const clock = new CountingClock();
      // Worker 0 alone runs type `only`: work of that type reaches it only by stealing.
      const handlers: Record<string, () => string> =
        i === 0 ? { t: () => 't', only: () => 'only' } : { t: () => 't' };
      const handle = runWorker(c, handlers, {
        world,
        clock,
        logger: memoryLogger(),
        stealAfterMs: STEAL_AFTER_MS,
        pollMs: STEAL_AFTER_MS,
      });
      workers.push({ handle, counts, clock });
    }
    await eventually(
      () =>
        workers.every((w) => w.handle.buckets.length > 0) &&
        workers.reduce((n, w) => n + w.handle.buckets.length, 0) === BUCKETS,
    );
    // Warm-up: every worker has listed every bucket once, then 50 idle periods pass in which
    // none sends a request (the world's reaper has made its first pass too).
    const clocks = workers.map((w) => w.clock);
    const total = () => workers.reduce((n, w) => n + requests(w.counts), 0);
    await eventually(() =>
      workers.every((w) => (w.counts.byMethod.childrenWithStat ?? 0) >= BUCKETS),
    );
    await eventually(async () => {
      const from = total();
      await idlePeriods(clocks, 50);
      return total() === from;
    }, 15_000);
    // 100 idle waits of every worker (each at most pollMs = STEAL_AFTER_MS). The rule before
    // watch-driven stealing listed the 10 or 11 other buckets every STEAL_AFTER_MS and, once
    // idle, waited 1 ms at a time: 60 to 66 requests per worker over these 100 waits.
    const before = workers.map((w) => requests(w.counts));
    await idlePeriods(clocks, 100);
    const spent = workers.map((w, i) => requests(w.counts) - before[i]!);
    expect(spent).toEqual([0, 0, 0]);

    // A task queued now is still taken at once, by its bucket's owner (its watch fires).
    const done = new Promise<string>((resolve) => {
      for (const w of workers) w.handle.once('completed', (e) => resolve(e.key.join('/')));
    });
    await engine.queue({ name: 'late', type: 't' });
    expect(await done).toBe('late');

    // A task only worker 0 runs, in a bucket worker 1 owns: the watch worker 0's last pass
    // left on that bucket brings it there.
    const name = nameIn(workers[1]!.handle, 'only');
    const stolen = new Promise<string>((resolve) => {
      workers[0]!.handle.once('completed', (e) => resolve(e.key.join('/')));
    });
    await engine.queue({ name, type: 'only' });
    expect(await stolen).toBe(name);
    await Promise.all(workers.map((w) => w.handle.stop()));
    await Promise.all(opened.map((c) => c.close()));
  });

  it('a pass that finds nothing is paid for before the next: changes elsewhere do not bring it back sooner', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: BUCKETS, logger: memoryLogger() });
    await engine.init();
    const [ca, cbRaw] = await Promise.all([backend().connect(), backend().connect()]);
    const a = runWorker(
      ca,
      { a: () => 'a' },
      { world, logger: memoryLogger(), stealAfterMs: 60_000 },
    );
    // Worker b runs only `b` and its time moves by hand.
    const stealAfterMs = 1000;
    const { b, clock, pending, calls } = await startWatcher(
      cbRaw,
      world,
      { b: () => 'b' },
      a,
      stealAfterMs,
    );
    const others = a.buckets.length;
    // Work b cannot take, through a's buckets only: b's watches there fire.
    let queued = 0;
    const churn = async () => {
      for (let i = 0, n = 0; n < others * 2; i++) {
        const name = `a${queued}x${i}`;
        if (!a.buckets.includes(fnv1a32(name) % BUCKETS)) continue;
        await engine.queue({ name, type: 'a' });
        n++;
      }
      queued += others * 2;
      await eventually(async () => (await engine.counts()).completed === queued);
    };
    // b is idle for one period: its first pass lists a's buckets, a first look (free).
    clock.advance(stealAfterMs);
    // That pass is over once b has listed each of a's buckets and (with tree watches) watches
    // each of its own: its requests go out in the background, and any counted after `first`
    // would be charged to the next pass.
    await firstLookOver(a, b, calls, cbRaw);
    await idlePeriods([clock], 50);
    const first = pending();
    // Past the owner's head start, b lists the buckets that changed (each once) and finds
    // nothing: that pass is paid for at 0.5 requests/s, 2 s of b's clock per request.
    await churn();
    clock.advance(stealAfterMs);
    await eventually(() => pending() > first);
    await idlePeriods([clock], 50);
    const second = pending() - first;
    expect(second, `${others} buckets of a's; b sent:\n${calls(first)}`).toBeLessThanOrEqual(
      others,
    );
    // More changes, and the head start is over again, but the pass is not paid off: no pass.
    await churn();
    clock.advance(stealAfterMs + 500);
    await idlePeriods([clock], 50);
    expect(pending()).toBe(first + second);
    // Paid off: one more pass, each changed bucket listed once, then quiet again.
    clock.advance(2000 * others);
    await eventually(() => pending() > first + second);
    await idlePeriods([clock], 50);
    const third = pending() - first - second;
    expect(
      third,
      `${others} buckets of a's; b sent:\n${calls(first + second)}`,
    ).toBeLessThanOrEqual(others);
    await idlePeriods([clock], 50);
    expect(pending()).toBe(first + second + third);
    await Promise.all([a.stop(), b.stop()]);
    await Promise.all([producer, ca, cbRaw].map((x) => x.close()));
  });
  it("gives a bucket's owner stealAfterMs after a change before an idle worker looks there", async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: BUCKETS, logger: memoryLogger() });
    await engine.init();
    const [ca, cbRaw] = await Promise.all([backend().connect(), backend().connect()]);
    // The owner runs one task at a time and is kept busy by `gate`, so a new task waits.
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = runWorker(
      ca,
      { t: (task) => (task.name.startsWith('g') ? gate : undefined) },
      { world, concurrency: 1, logger: memoryLogger(), stealAfterMs: 60_000 },
    );
    const stealAfterMs = 1000;
    const { b, clock, pending, calls } = await startWatcher(
      cbRaw,
      world,
      { t: () => 'b' },
      a,
      stealAfterMs,
    );
    const gated = nameIn(a, 'g');
    await engine.queue({ name: gated, type: 't' });
    await eventually(async () => (await engine.task([gated]))?.state === 'working');
    // b's first look at a's buckets (free), then past its wait after that look. That pass is
    // over once b has listed each of a's buckets and (with tree watches) watches each of its
    // own: counting its requests instead, its own watches could stand in for a listing still
    // to go out, which then lands in the window below.
    clock.advance(stealAfterMs);
    await firstLookOver(a, b, calls, cbRaw);
    await idlePeriods([clock], 50);
    clock.advance(2 * stealAfterMs);
    await idlePeriods([clock], 50);
    const before = pending();
    // A task in a bucket of the busy owner: b's watch there fires (its clock stands still).
    const name = nameIn(a, 'n');
    await engine.queue({ name, type: 't' });
    await idlePeriods([clock], 200);
    clock.advance(stealAfterMs - 1);
    await idlePeriods([clock], 100);
    expect(pending(), `b sent:\n${calls(before)}`).toBe(before);
    expect(b.stats.claimed).toBe(0);
    // The head start is over: b takes the task the owner could not.
    clock.advance(1);
    await eventually(() => b.stats.completed === 1);
    expect((await engine.task([name]))?.state).toBe('completed');
    release();
    await Promise.all([a.stop(), b.stop()]);
    await Promise.all([producer, ca, cbRaw].map((x) => x.close()));
  });
});
