import { createEngine } from '@zoott/core';
import { fnv1a32 } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';

const BUCKETS = 2;

/** A task name that lands in `bucket`. */
function nameIn(prefix: string, bucket: number): string {
  for (let i = 0; ; i++) if (fnv1a32(`${prefix}${i}`) % BUCKETS === bucket) return `${prefix}${i}`;
}

describeOnBackends('claimer: steal watches', (backend) => {
  it('a steal listing leaves a watch only on the buckets its worker watches (scoutWatch)', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: BUCKETS, logger: memoryLogger() });
    await engine.init();
    const changed: number[] = [];
    // This worker watches bucket 0 for its peers; bucket 1 is another worker's to watch.
    const claimer = await engine.claimer({
      worker: 'w',
      types: ['t'],
      scoutWatch: (bucket) => bucket === 0,
      onForeignChange: (bucket) => changed.push(bucket),
    });
    try {
      claimer.setWatched([]);
      // A steal pass (a streak lists every bucket it does not own): nothing to take in either.
      expect(await claimer.claimBatch([0, 1], 1, true)).toEqual([]);
      expect(claimer.scouted(0)).toBe(true);
      expect(claimer.scouted(1)).toBe(false);
      // A change in each: bucket 1's first, so its notification (one session's watches fire in
      // the order of the changes) would come before bucket 0's.
      await engine.queue({ name: nameIn('b', 1), type: 't' });
      await engine.queue({ name: nameIn('a', 0), type: 't' });
      await eventually(() => changed.includes(0));
      // Only the watched bucket's change reaches this worker: the other's would be one more
      // notification per idle worker per change (the herd the watchers bound).
      expect(changed).toEqual([0]);
    } finally {
      claimer.close();
      await c.close();
    }
  });
});
