import { createEngine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from '../engine/helpers.js';

describeOnBackends('engine: a claim carries its priority', (backend) => {
  it('as queued, for a root and a child, from the entry name parsed once at listing', async () => {
    const coordinator = await backend().connect();
    const engine = createEngine(coordinator, {
      world: worldName(),
      buckets: 4,
      logger: memoryLogger(),
    });
    await engine.init();
    await engine.queue({ name: 'low', type: 't' }, null, null, { priority: -5 });
    await engine.queue({ name: 'high', type: 't' }, null, null, { priority: 12 });
    await engine.queue({ name: 'plain', type: 't' });
    const seen: Array<[string, number]> = [];
    for (;;) {
      const claim = await engine.claim();
      if (!claim) break;
      seen.push([claim.name, claim.priority]);
      if (claim.name === 'high')
        await engine.queue({ name: 'child', type: 't' }, { key: claim.key }, null, {
          priority: 3,
        });
      await engine.complete(claim);
    }
    // The order is the order tests' business; here, that each claim says its own priority.
    expect(new Map(seen)).toEqual(
      new Map([
        ['high', 12],
        ['child', 3],
        ['plain', 0],
        ['low', -5],
      ]),
    );
    await coordinator.close();
  });
});
