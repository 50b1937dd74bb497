import { createEngine, utf8 } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from '../engine/helpers.js';

describeOnBackends('engine: claimer', (backend) => {
  it('skips and logs once a node named like an entry whose data is not an entry', async () => {
    const c = await backend().connect();
    const world = worldName();
    const logger = memoryLogger();
    const engine = createEngine(c, { world, buckets: 1, logger });
    await engine.init();
    const bucket = `/zoott_p/${world}/0000`;
    // Foreign nodes that parse as entry names: not JSON, and JSON of the wrong shape.
    await c.create(`${bucket}/q1000000-junk-0000000001`, utf8.encode('not-json{'));
    await c.create(`${bucket}/q1000000-null-0000000002`, utf8.encode('null'));
    await engine.queue({ name: 'good', type: 't' });
    const claim = await engine.claim();
    expect(claim?.name).toBe('good');
    await engine.complete(claim!);
    expect(await engine.claim()).toBeNull();
    const skipped = logger.lines.filter(
      (l) => l === 'skipping a pending node that is not a zoott entry',
    );
    expect(skipped).toHaveLength(2);
    // Left as they are, and counted the way list() shows them.
    expect(utf8.decode((await c.get(`${bucket}/q1000000-junk-0000000001`)).data)).toBe('not-json{');
    const pending = (await engine.list()).filter((t) => t.state === 'pending').length;
    expect(await engine.counts()).toEqual({ pending, working: 0, completed: 1, failed: 0 });
    await c.close();
  });

  it('counts ignore foreign nodes in a bucket, like list()', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 1, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'a', type: 't' });
    await c.create(`/zoott_p/${world}/0000/garbage`, utf8.encode('x'));
    await c.create(`/zoott_w/${world}/0000/stray`, utf8.encode('x'));
    expect(await engine.counts()).toEqual({ pending: 1, working: 0, completed: 0, failed: 0 });
    expect((await engine.list()).map((t) => t.state)).toEqual(['pending']);
    await c.close();
  });

  it('re-lists with a watch a bucket that becomes watched after an unwatched listing', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 1, logger: memoryLogger() });
    await engine.init();
    const claimer = await engine.claimer({ worker: 'w', types: ['t'] });
    await engine.queue({ name: 'other', type: 'not-handled' });
    // An idle steal scan: the bucket is listed while not watched.
    claimer.setWatched([]);
    expect(await claimer.claim([0])).toBeNull();
    // A rebalance makes it owned; work queued afterwards must be seen.
    claimer.setWatched([0]);
    await engine.queue({ name: 'new', type: 't' });
    expect((await claimer.claim([0]))?.name).toBe('new');
    claimer.close();
    await c.close();
  });
});
