import { createEngine, runWorker } from '@zoott/core';
import { fnv1a32, ownedBuckets } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';

const BUCKETS = 8;

describeOnBackends('engine: a dead worker’s buckets', (backend) => {
  it('are taken within a second of its session’s expiry, after a drain', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: BUCKETS, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    // The dead worker: a registration whose session never claims, then ends.
    const dead = await backend().connect();
    const deadPath = await dead.create(`${registry}/worker-`, new Uint8Array(), {
      ephemeral: true,
      sequential: true,
    });
    const started = new Map<string, number>();
    const worker = runWorker(
      c,
      {
        t: (task) => {
          started.set(task.name, Date.now());
        },
      },
      // No stealing in the test's time: only the expiry can hand the dead worker's task over.
      { world, logger: memoryLogger(), scheduler: false, stealAfterMs: 60_000 },
    );
    try {
      await eventually(() => worker.buckets.length === BUCKETS / 2);
      const deadName = deadPath.slice(deadPath.lastIndexOf('/') + 1);
      const mine = worker.registryPath?.slice(worker.registryPath.lastIndexOf('/') + 1) ?? '';
      const deadBuckets = ownedBuckets(deadName, [deadName, mine], BUCKETS);
      const inDead = (i: number) => deadBuckets.includes(fnv1a32(`r${i}`) % BUCKETS);
      // A drain of the live worker's own buckets first.
      const own = Array.from({ length: 200 }, (_, i) => i)
        .filter((i) => !inDead(i))
        .slice(0, 40);
      for (const i of own) await engine.queue({ name: `r${i}`, type: 't' });
      await eventually(() => started.size === own.length);
      const late = Array.from({ length: 200 }, (_, i) => i + 1000).find(inDead) ?? -1;
      await engine.queue({ name: `r${late}`, type: 't' });
      const expiredAt = Date.now();
      await backend().expireSession(dead);
      await eventually(() => started.has(`r${late}`), 5_000);
      expect(started.get(`r${late}`)! - expiredAt).toBeLessThan(1_000);
    } finally {
      await worker.stop();
    }
  });
});
