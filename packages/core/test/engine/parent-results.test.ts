import { type AncestorResult, createEngine, runWorker } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from './helpers.js';

const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };

describeOnBackends('engine: parent results in handlers', (backend) => {
  it('reads the parent and every ancestor, and nothing above a root', async () => {
    const c = await backend().connect();
    const world = worldName('pr');
    const engine = createEngine(c, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'root', type: 'r' });
    await engine.queue({ name: 'mid', type: 'm', parent: { key: ['root'] } });
    await engine.queue({ name: 'leaf', type: 'l', parent: { key: ['root', 'mid'] } });
    const seen = new Map<string, { parent: unknown; ancestors: AncestorResult[] }>();
    const worker = runWorker(
      c,
      {
        r: async (t) => {
          seen.set(t.name, {
            parent: await t.parentResult(),
            ancestors: await t.ancestorResults(),
          });
          return { n: 1 };
        },
        m: async (t) => {
          const p = await t.parentResult<{ n: number }>();
          seen.set(t.name, { parent: p, ancestors: await t.ancestorResults() });
          return { n: (p?.n ?? 0) + 1 };
        },
        l: async (t) => {
          seen.set(t.name, {
            parent: await t.parentResult(),
            ancestors: await t.ancestorResults(),
          });
          return 'done';
        },
      },
      { world, logger: memoryLogger(), ...fast },
    );
    await eventually(() => seen.has('leaf'));
    await worker.stop();
    expect(seen.get('root')).toEqual({ parent: undefined, ancestors: [] });
    expect(seen.get('mid')).toEqual({
      parent: { n: 1 },
      ancestors: [{ key: ['root'], name: 'root', completed: true, type: 'r', result: { n: 1 } }],
    });
    expect(seen.get('leaf')).toEqual({
      parent: { n: 2 },
      ancestors: [
        { key: ['root', 'mid'], name: 'mid', completed: true, type: 'm', result: { n: 2 } },
        { key: ['root'], name: 'root', completed: true, type: 'r', result: { n: 1 } },
      ],
    });
    await c.close();
  });

  it('an ancestor without a completed record reads as not completed', async () => {
    const c = await backend().connect();
    const world = worldName('pn');
    const engine = createEngine(c, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'p', type: 'x' });
    await engine.complete((await engine.claim())!, 'kept');
    await engine.queue({ name: 'k', type: 'y', parent: { key: ['p'] } });
    // An operator removed the parent's record (the tree node stays): nothing to read.
    const ctx = await engine.context();
    await c.delete(ctx.layout.recordPath('c', ['p']));
    let got: { parent: unknown; ancestors: AncestorResult[] } | null = null;
    const worker = runWorker(
      c,
      {
        y: async (t) => {
          got = { parent: await t.parentResult(), ancestors: await t.ancestorResults() };
          return null;
        },
      },
      { world, logger: memoryLogger(), ...fast },
    );
    await eventually(() => got !== null);
    await worker.stop();
    expect(got).toEqual({
      parent: undefined,
      ancestors: [{ key: ['p'], name: 'p', completed: false }],
    });
    await c.close();
  });
});
