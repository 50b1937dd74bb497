import { type Coordinator, createEngine, type Engine, runWorker } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  eventually,
  intercept,
  memoryLogger,
  oneBucketEngine,
  oneBucketWorld,
  TestClock,
  worldName,
} from '../engine/helpers.js';

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
        // Listings from children watches: the urgent entry is first read by the claim call
        // two free slots allow. With tree watches its event lists it at once, and the first
        // free slot's call reads it (and, it not being runnable yet, takes a late one).
        { world, concurrency: 8, clock, logger: memoryLogger(), pollMs: 50, entryEvents: false },
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
  /**
   * A world of one bucket, an engine of another client, and this client's claimer on it,
   * through `wrap` (an interception) when given.
   */
  async function setup(wrap?: (raw: Coordinator, world: string, other: Engine) => Coordinator) {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    const raw = await backend().connect();
    const engine = oneBucketEngine(wrap ? wrap(raw, world, other) : raw, world);
    const claimer = await engine.claimer({ worker: 'w' });
    claimer.setWatched([0]);
    return { world, other, claimer, raw };
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

  it('a priority-5 task whose entry was gone when this claimer read it in the background', async () => {
    // Armed once x is queued: the claimer's next entry read is x's, and x is cancelled just
    // before that read goes out, after the listing that shows it.
    let armed = false;
    let xRead: Promise<unknown> | undefined;
    const { world, other, claimer, raw } = await setup((raw, world, other) =>
      intercept(raw, 'get', (get) => async (...args) => {
        if (!armed || !args[0].startsWith(`/zoott_p/${world}/`)) return get(...args);
        armed = false;
        const read = other.cancel(['x']).then(() => get(...args));
        xRead = read.catch(() => undefined);
        return read;
      }),
    );
    for (const name of ['k1', 'k2', 'k3', 'k4'])
      await other.queue({ name, type: 't', priority: 10 });
    // Reads them all, claims k1; the others stay read and cached.
    expect((await claimer.claimBatch([0], 1)).map((cl) => cl.key)).toEqual([['k1']]);
    await other.queue({ name: 'x', type: 't', priority: 5 });
    const bucket = `/zoott_p/${world}/0000`;
    // A read on the claimer's connection is answered after the change events and replies
    // before it: the claimer has heard that its listing is stale.
    await raw.children(bucket);
    armed = true;
    // The first call after x was queued claims k2 and reads x in the background (it ranks
    // below the known k3 and k4) once a listing shows x. A stale listing that still offers
    // work is re-read in the background, so on ZooKeeper that is the second call.
    expect((await claimer.claimBatch([0], 1)).map((cl) => cl.key)).toEqual([['k2']]);
    await raw.children(bucket);
    const rest = await claimer.claimBatch([0], 10);
    expect(rest.map((cl) => cl.key)).toEqual([['k3'], ['k4']]);
    expect(xRead).toBeDefined();
    await xRead;
    // The read's continuation (which records x as gone) runs before the next macrotask.
    await new Promise((resolve) => setImmediate(resolve));
    // The cached listing still shows x (no listing since) above priority 0, and nothing else
    // there is runnable: x's read said gone, so no claim call is asked for it.
    expect(claimer.hasUrgent([0], 0)).toBe(false);
  });
});
