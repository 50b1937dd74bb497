import { createEngine, runWorker } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, oneBucketWorld, TestClock, worldName } from './helpers.js';

describeOnBackends(
  'worker: work above what runs does not wait for a batch of free slots',
  (backend) => {
    it('a priority-10 task takes the first slot that frees while priority-0 tasks run', async () => {
      const producer = await backend().connect();
      const world = worldName();
      const clock = new TestClock();
      const engine = createEngine(producer, { world, buckets: 1, clock, logger: memoryLogger() });
      await engine.init();
      for (let i = 0; i < 8; i++) await engine.queue({ name: `r${i}`, type: 't' });
      const running = new Map<string, () => void>();
      const started: string[] = [];
      const wc = await backend().connect();
      // 8 slots: with work running, claims wait for a quarter of them (2) to be free.
      const worker = runWorker(
        wc,
        {
          t: (task) =>
            new Promise<void>((resolve) => {
              started.push(task.key[0]!);
              running.set(task.key[0]!, resolve);
            }),
        },
        { world, concurrency: 8, clock, logger: memoryLogger(), pollMs: 50 },
      );
      await eventually(() => started.length === 8);
      // Not runnable yet, so the claim call that two free slots allow reads it, and leaves it.
      await engine.queue({
        name: 'urgent',
        type: 't',
        priority: 10,
        notBefore: clock.now() + 1000,
      });
      for (let i = 0; i < 4; i++) await engine.queue({ name: `late${i}`, type: 't' });
      const finish = (name: string) => {
        running.get(name)!();
        running.delete(name);
      };
      finish('r0');
      finish('r1');
      await eventually(() => started.length === 10);
      expect(started.slice(8).sort()).toEqual(['late0', 'late1']);
      clock.advance(1000);
      // One slot frees: the batch would wait for a second one; the urgent task does not.
      finish('r2');
      await eventually(() => started.includes('urgent'));
      expect(started).toHaveLength(11);
      for (const release of running.values()) release();
      await worker.stop();
      await Promise.all([producer.close(), wc.close()]);
    });
  },
);

describeOnBackends('claimer: what is not urgent work', (backend) => {
  /** A world of one bucket, an engine of another client, and this client's claimer on it. */
  async function setup() {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    const engine = createEngine(await backend().connect(), {
      world,
      buckets: 1,
      clock: new TestClock(),
      logger: memoryLogger(),
    });
    const claimer = await engine.claimer({ worker: 'w' });
    claimer.setWatched([0]);
    return { other, claimer };
  }

  it('a priority-10 task another worker runs, which this claimer found busy', async () => {
    const { other, claimer } = await setup();
    await other.queue({ name: 'x', type: 't', priority: 10 });
    expect((await other.claim())?.key).toEqual(['x']);
    // The call lists and reads it, and finds its working node taken: nothing for it here
    // until that node goes (a claim call per free slot would find nothing each time).
    expect(await claimer.claimBatch([0], 1)).toEqual([]);
    expect(claimer.hasUrgent([0], 0)).toBe(false);
  });
});
