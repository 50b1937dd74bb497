import { type Coordinator, createEngine, runWorker, type WorkerHandle } from '@zoott/core';
import { bucketOwners, fnv1a32, stealWatchers } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';
import { CountingClock, idlePeriods } from './idle-clock.js';
import { countingRequests } from './request-log.js';

const BUCKETS = 6;
const WORKERS = 6;

describeOnBackends('worker: a steal streak', (backend) => {
  it('lists the buckets its worker does not watch without leaving a watch there', {
    timeout: 120_000,
  }, async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: BUCKETS, logger: memoryLogger() });
    await engine.init();
    const opened: Coordinator[] = [producer];
    const workers: { handle: WorkerHandle; sent: string[] }[] = [];
    const clocks: CountingClock[] = [];
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      for (let i = 0; i < WORKERS; i++) {
        const raw = await backend().connect();
        opened.push(raw);
        const { c, sent } = countingRequests(raw);
        const clock = new CountingClock();
        clocks.push(clock);
        // A task named g* holds its worker's one slot.
        const t = (task: { name: string }) => (task.name.startsWith('g') ? gate : undefined);
        const handle = runWorker(
          c,
          { t },
          {
            world,
            clock,
            concurrency: 1,
            pollMs: 50,
            // The owner takes the gated task before any watcher's head start is over.
            stealAfterMs: 1_000,
            logger: memoryLogger(),
            scheduler: false,
            retention: false,
          },
        );
        workers.push({ handle, sent });
      }
      // Every worker holds the share the whole registry gives it: ownership has settled.
      const nameOf = (w: WorkerHandle) =>
        w.registryPath?.slice(w.registryPath.lastIndexOf('/') + 1);
      let names: string[] = [];
      let owners: string[] = [];
      await eventually(() => {
        if (workers.some((w) => nameOf(w.handle) === undefined)) return false;
        names = workers.map((w) => nameOf(w.handle)!);
        owners = bucketOwners(names, BUCKETS);
        return workers.every(
          (w, i) =>
            w.handle.buckets.join() ===
            owners.flatMap((o, b) => (o === names[i] ? [b] : [])).join(),
        );
      }, 30_000);
      const watchers = stealWatchers(names, owners, () => ['t']);
      /** Whether worker `name` has a bucket it neither owns nor watches. */
      const looksAway = (name: string) =>
        owners.some((o, b) => o !== name && !watchers[b]!.includes(name));
      // A bucket whose every watcher, if it steals there, has somewhere its streak looks away.
      const busyBucket = watchers.findIndex((ws) => ws.length > 0 && ws.every(looksAway));
      expect(busyBucket).toBeGreaterThanOrEqual(0);
      const nameIn = (prefix: string, bucket: number) => {
        for (let i = 0; ; i++)
          if (fnv1a32(`${prefix}${i}`) % BUCKETS === bucket) return `${prefix}${i}`;
      };
      const completed = async (name: string) => (await engine.task([name]))?.state === 'completed';
      // A first task in every bucket spends the watches workers left there while the fleet
      // was joining (one that watched a bucket then and no longer does is told once).
      const primes = Array.from({ length: BUCKETS }, (_, b) => nameIn('p', b));
      for (const name of primes) await engine.queue({ name, type: 't' });
      await eventually(async () => (await Promise.all(primes.map(completed))).every(Boolean));
      await idlePeriods(clocks, 20);
      // The owner of that bucket is busy: one of the bucket's watchers takes the next task
      // there and, having found work, lists every bucket it has not looked at (a streak).
      const busy = nameIn('g', busyBucket);
      await engine.queue({ name: busy, type: 't' });
      await eventually(async () => (await engine.task([busy]))?.state === 'working');
      const marks = workers.map((w) => w.sent.length);
      const done = workers.map((w) => w.handle.stats.completed);
      const stolen = nameIn('n', busyBucket);
      await engine.queue({ name: stolen, type: 't' });
      // The worker counts the completion once its reply is in: after the task shows completed.
      const ran = () => workers.findIndex((w, i) => w.handle.stats.completed > done[i]!);
      await eventually(() => ran() >= 0, 20_000);
      const thief = ran();
      expect(names[thief]).not.toBe(owners[busyBucket]);
      // Its streak is over once every worker has been idle a while.
      await idlePeriods(clocks, 20);
      /** Whether `line` is `verb` on bucket `bucket`'s pending node. */
      const on = (line: string, verb: string, bucket: number) =>
        line.startsWith(`${verb} /zoott_p/${world}/`) &&
        Number(line.slice(line.lastIndexOf('/') + 1)) === bucket;
      // A bucket the thief neither owns nor watches, listed in its streak.
      const me = names[thief]!;
      const streak = workers[thief]!.sent.slice(marks[thief]);
      const other = owners.findIndex(
        (o, b) =>
          o !== me &&
          !watchers[b]!.includes(me) &&
          streak.some((l) => on(l, 'childrenWithStat', b)),
      );
      expect(other, streak.join('\n')).toBeGreaterThanOrEqual(0);
      // A task there: its owner takes it; the thief hears nothing of it.
      const after = workers[thief]!.sent.length;
      const later = nameIn('l', other);
      await engine.queue({ name: later, type: 't' });
      await eventually(() => completed(later), 20_000);
      // The fleet's own rhythm: a notification of that change arrives within these rounds.
      await idlePeriods(clocks, 20);
      const since = workers[thief]!.sent.slice(after);
      expect(
        since.filter((l) => on(l, 'notified', other)),
        since.join('\n'),
      ).toEqual([]);
    } finally {
      release();
      await Promise.all(workers.map((w) => w.handle.stop()));
      await Promise.all(opened.map((c) => c.close()));
    }
  });
});
