import { createEngine, runWorker } from '@zoott/core';
import { encodeJson } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from './helpers.js';

const fast = { pollMs: 200, stealAfterMs: 60_000, localityWaitMs: 0 };

/**
 * Persistent nodes where zoott only ever writes ephemeral ones: a worker registration or a
 * claim that no session owns (written by hand, or recreated by an import of an export taken
 * while the world ran). They must not own buckets, show a task as working, or block it.
 */
describeOnBackends('engine: persistent nodes in ephemeral places', (backend) => {
  it('a persistent registry node owns no buckets: the one live worker owns them all', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const engine = createEngine(producer, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    await producer.create(
      `/zoott_workers/${world}/worker-0000000000`,
      encodeJson({ id: 'ghost', types: ['t'], buckets: [0, 1], started: 1, version: 1 }),
    );
    const logger = memoryLogger();
    const wc = await backend().connect();
    // No stealing (stealAfterMs is a minute): only owned buckets are served.
    const worker = runWorker(wc, { t: (t) => t.name }, { world, logger, ...fast });
    try {
      await eventually(() => worker.buckets.length === 4);
      expect([...worker.buckets]).toEqual([0, 1, 2, 3]);
      for (let i = 0; i < 8; i++) await engine.queue({ name: `r${i}`, type: 't' });
      await eventually(async () => (await engine.counts()).completed === 8);
      expect(logger.lines.some((l) => /persistent node in the worker registry/.test(l))).toBe(true);
    } finally {
      await worker.stop();
    }
  });

  it('a persistent working node is no claim: the task shows pending, and is claimed and run with its subtree', async () => {
    const producer = await backend().connect();
    const world = worldName();
    const logger = memoryLogger();
    const engine = createEngine(producer, { world, buckets: 2, logger });
    await engine.init();
    await engine.queue({ name: 'a', type: 't' });
    await engine.queue({ name: 'b', type: 't' }, { key: ['a'] });
    const ctx = await engine.context();
    const ghost = ctx.layout.recordPath('w', ['a']);
    await producer.create(ghost, encodeJson({ worker: 'ghost', session: '0', at: 1 }));
    expect((await engine.task(['a']))?.state).toBe('pending');
    expect(await engine.counts()).toEqual({ pending: 2, working: 0, completed: 0, failed: 0 });
    expect((await engine.list('working')).length).toBe(0);

    const wc = await backend().connect();
    const worker = runWorker(wc, { t: (t) => t.name }, { world, logger, ...fast });
    try {
      await eventually(async () => (await engine.counts()).completed === 2);
    } finally {
      await worker.stop();
    }
    expect((await engine.task(['a', 'b']))?.result).toBe('b');
    expect(logger.lines.some((l) => /persistent node in the working area/.test(l))).toBe(true);
  });
});
