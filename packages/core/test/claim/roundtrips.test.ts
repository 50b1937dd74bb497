import { createEngine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { counting, memoryLogger, worldName } from '../engine/helpers.js';

describeOnBackends('engine: round trips', (backend) => {
  it('costs three writes per task when tasks go one at a time: queue, claim, complete', async () => {
    const raw = await backend().connect();
    const world = worldName();
    await createEngine(raw, { world, buckets: 4, logger: memoryLogger() }).init();
    const { c, counts, ops } = counting(raw);
    const engine = createEngine(c, { world, logger: memoryLogger() });
    const n = 20;
    for (let i = 0; i < n; i++) await engine.queue({ name: `t${i}`, type: 't', data: i });
    const afterQueue = { ...counts };
    expect(afterQueue.writes).toBe(n);
    let done = 0;
    for (;;) {
      const claim = await engine.claim();
      if (!claim) break;
      await engine.complete(claim, claim.data);
      done++;
    }
    expect(done).toBe(n);
    // Writes: one multi per queue, one per claim, one per complete.
    expect(counts.writes).toBe(3 * n);
    expect(ops.every((m) => m.length <= 4)).toBe(true);
    // Reads: the world meta, bucket listings and one entry read per task (no tree reads).
    const readsPerTask = (counts.reads - afterQueue.reads) / n;
    expect(readsPerTask).toBeLessThan(3);
    await raw.close();
  });
});
