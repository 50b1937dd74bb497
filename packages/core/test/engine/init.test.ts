import { createEngine } from '@zoott/core';
import { DEFAULT_BUCKETS } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from './helpers.js';

describeOnBackends('engine: init', (backend) => {
  it('is idempotent and safe when several processes call it at once', async () => {
    const world = worldName();
    const clients = await Promise.all([1, 2, 3].map(() => backend().connect()));
    await Promise.all(
      clients.map((c) => createEngine(c, { world, buckets: 8, logger: memoryLogger() }).init()),
    );
    const engine = createEngine(clients[0]!, { world, logger: memoryLogger() });
    await engine.init();
    for (const area of ['p', 'w', 'c', 'f']) {
      expect((await clients[0]!.children(`/zoott_${area}/${world}`)).sort()).toEqual([
        '0000',
        '0001',
        '0002',
        '0003',
        '0004',
        '0005',
        '0006',
        '0007',
      ]);
    }
    expect(await engine.counts()).toEqual({ pending: 0, working: 0, completed: 0, failed: 0 });
    // The bucket count is fixed per world.
    await expect(
      createEngine(clients[1]!, { world, buckets: 16, logger: memoryLogger() }).init(),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG', field: 'buckets' });
    expect(DEFAULT_BUCKETS).toBe(64);
    expect(() => createEngine(clients[0]!, { world, buckets: 0 })).toThrow(/buckets/);
  });
});
