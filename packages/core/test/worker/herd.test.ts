import { type Coordinator, createEngine, runWorker, type WorkerHandle } from '@zoott/core';
import { bucketOwners, fnv1a32, stealWatchers } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';
import { CountingClock, idlePeriods } from './idle-clock.js';
import { countingRequests } from './request-log.js';

const BUCKETS = 16;

/** The registry name of a worker's current session. */
const nameOf = (w: WorkerHandle) => w.registryPath?.slice(w.registryPath.lastIndexOf('/') + 1);
/**
 * Long enough for the owner to take the task first on a loaded machine (a watcher that took
 * it would send a claim and a completion, and the count would measure that, not the herd).
 */
const STEAL_AFTER_MS = 1_000;

/**
 * Requests the workers other than the task's owner send for one task queued into an idle
 * fleet of `n`, once every worker has been idle past its look after the change.
 */
async function herdCost(
  backend: () => { connect(): Promise<Coordinator> },
  n: number,
): Promise<{ others: number; lines: string }> {
  const producer = await backend().connect();
  const world = worldName();
  const engine = createEngine(producer, { world, buckets: BUCKETS, logger: memoryLogger() });
  await engine.init();
  const opened: Coordinator[] = [producer];
  const workers: { handle: WorkerHandle; sent: string[]; clock: CountingClock }[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const raw = await backend().connect();
      opened.push(raw);
      const { c, sent } = countingRequests(raw);
      const clock = new CountingClock();
      const handle = runWorker(
        c,
        { t: () => 't' },
        {
          world,
          clock,
          logger: memoryLogger(),
          stealAfterMs: STEAL_AFTER_MS,
          pollMs: 50,
          scheduler: false,
          retention: false,
        },
      );
      workers.push({ handle, sent, clock });
    }
    // Every worker holds the share the whole registry gives it: ownership has settled.
    let names: string[] = [];
    let owners: string[] = [];
    await eventually(() => {
      if (workers.some((w) => nameOf(w.handle) === undefined)) return false;
      names = workers.map((w) => nameOf(w.handle)!);
      owners = bucketOwners(names, BUCKETS);
      return workers.every(
        (w, i) =>
          w.handle.buckets.join() === owners.flatMap((o, b) => (o === names[i] ? [b] : [])).join(),
      );
    }, 30_000);
    // Quiet: 50 idle periods of every worker with no request from any.
    const clocks = workers.map((w) => w.clock);
    const total = () => workers.reduce((k, w) => k + w.sent.length, 0);
    const quiet = () =>
      eventually(async () => {
        const from = total();
        await idlePeriods(clocks, 50);
        return total() === from;
      }, 60_000);
    await quiet();
    const name = 'lone';
    const bucket = fnv1a32(name) % BUCKETS;
    const owner = workers.findIndex((w) => w.handle.buckets.includes(bucket));
    /** Whether `line` is `verb` on the bucket's pending node (its number is zero-padded). */
    const onBucket = (line: string, verb: string) =>
      line.startsWith(`${verb} /zoott_p/${world}/`) &&
      Number(line.slice(line.lastIndexOf('/') + 1)) === bucket;
    // The workers that keep a steal watch on the bucket, as every worker computes them.
    const watchers = stealWatchers(names, owners, () => ['t'])[bucket]!.map((n) =>
      names.indexOf(n),
    );
    expect(watchers.length).toBeGreaterThan(0);
    /**
     * Queues `task`, waits until each of the bucket's watchers was told of it and listed the
     * bucket again (after its head start for the owner, and any pause its last look bought),
     * then until the fleet is quiet again: what the change brings has all been sent.
     */
    const one = async (task: string) => {
      const marks = workers.map((w) => w.sent.length);
      await engine.queue({ name: task, type: 't' });
      await eventually(async () => (await engine.task([task]))?.state === 'completed');
      await eventually(
        () =>
          watchers.every((i) => {
            const sent = workers[i]!.sent.slice(marks[i]);
            const told = sent.findIndex((l) => onBucket(l, 'notified'));
            return told >= 0 && sent.slice(told).some((l) => onBucket(l, 'childrenWithStat'));
          }),
        60_000,
      );
      await quiet();
    };
    // A first task in that bucket spends the watches workers left there while the fleet was
    // joining (a worker that watched it then and no longer does is notified once, and lists
    // nothing): the second shows what every task costs from then on.
    let prime = 0;
    while (fnv1a32(`p${prime}`) % BUCKETS !== bucket) prime++;
    await one(`p${prime}`);
    const before = workers.map((w) => w.sent.length);
    await one(name);
    let others = 0;
    const lines: string[] = [];
    workers.forEach((w, i) => {
      if (i === owner) return;
      // One notification per worker: the client fans it out to each callback on the path.
      const sent = w.sent.slice(before[i]!);
      const mine = [
        ...sent.filter((l) => !l.startsWith('notified ')),
        ...new Set(sent.filter((l) => l.startsWith('notified '))),
      ];
      others += mine.length;
      for (const l of mine) lines.push(`worker ${i}: ${l}`);
    });
    return { others, lines: lines.join('\n') };
  } finally {
    await Promise.all(workers.map((w) => w.handle.stop()));
    await Promise.all(opened.map((c) => c.close()));
  }
}

describeOnBackends('engine: a new task in an idle fleet', (backend) => {
  it('costs the workers other than its owner a bounded number of requests at 4 and 16 workers', {
    timeout: 120_000,
  }, async () => {
    const small = await herdCost(backend, 4);
    const large = await herdCost(backend, 16);
    // Two idle workers keep a watch on each bucket (and one per task type nobody else runs):
    // each is notified once and lists it once after the owner's head start, whatever the
    // fleet's size. Every other worker hears nothing of it.
    expect(small.others, small.lines).toBeLessThanOrEqual(4);
    expect(large.others, large.lines).toBeLessThanOrEqual(4);
  });

  it("still takes a busy owner's task, and a type one worker alone runs, in a fleet of 8", {
    timeout: 120_000,
  }, async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: BUCKETS, logger: memoryLogger() });
    await engine.init();
    const opened: Coordinator[] = [producer];
    const handles: WorkerHandle[] = [];
    const clocks: CountingClock[] = [];
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      for (let i = 0; i < 8; i++) {
        const c = await backend().connect();
        opened.push(c);
        // Worker 0 alone runs `only`; a task named g* holds its worker's one slot.
        const t = (task: { name: string }) => (task.name.startsWith('g') ? gate : undefined);
        const handlers: Record<string, (task: { name: string }) => unknown> =
          i === 0 ? { t, only: () => 'only' } : { t };
        const clock = new CountingClock();
        clocks.push(clock);
        handles.push(
          runWorker(c, handlers, {
            world,
            clock,
            pollMs: 50,
            concurrency: 1,
            logger: memoryLogger(),
            // The owner must take the gated task before any watcher's head start is over.
            stealAfterMs: 1_000,
            scheduler: false,
            retention: false,
          }),
        );
      }
      // Every worker holds the share the whole registry gives it: ownership has settled.
      let names: string[] = [];
      let owners: string[] = [];
      await eventually(() => {
        if (handles.some((w) => nameOf(w) === undefined)) return false;
        names = handles.map((w) => nameOf(w)!);
        owners = bucketOwners(names, BUCKETS);
        return handles.every(
          (w, i) =>
            w.buckets.join() === owners.flatMap((o, b) => (o === names[i] ? [b] : [])).join(),
        );
      }, 30_000);
      // Past every worker's first look (after stealAfterMs idle): the owner alone takes the next.
      await idlePeriods(clocks, 20);
      // A bucket of another worker where worker 0 is not one of the two watchers that every
      // worker runs the same types for would choose: only its type brings it there.
      const plain = stealWatchers(names, owners, () => ['t']);
      const bucket = owners.findIndex((o, b) => o !== names[0] && !plain[b]!.includes(names[0]!));
      expect(bucket).toBeGreaterThanOrEqual(0);
      const nameIn = (prefix: string) => {
        for (let i = 0; ; i++)
          if (fnv1a32(`${prefix}${i}`) % BUCKETS === bucket) return `${prefix}${i}`;
      };
      const owner = handles[names.indexOf(owners[bucket]!)]!;
      const gated = nameIn('g');
      await engine.queue({ name: gated, type: 't' });
      await eventually(async () => (await engine.task([gated]))?.state === 'working');
      // The worker counts its claim once the reply is in, which may be after the task shows.
      await eventually(() => owner.stats.claimed === 1);
      // The owner is busy: one of the bucket's watchers takes the next task after its wait.
      const next = nameIn('n');
      await engine.queue({ name: next, type: 't' });
      await eventually(async () => (await engine.task([next]))?.state === 'completed', 20_000);
      // A type only worker 0 runs, in that bucket: worker 0 watches it for that type.
      const only = nameIn('o');
      await engine.queue({ name: only, type: 'only' });
      await eventually(async () => (await engine.task([only]))?.state === 'completed', 20_000);
      await eventually(() => handles[0]!.stats.completed >= 1);
    } finally {
      release();
      await Promise.all(handles.map((w) => w.stop()));
      await Promise.all(opened.map((c) => c.close()));
    }
  });
});
