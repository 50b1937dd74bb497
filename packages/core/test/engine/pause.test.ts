import { type Coordinator, createEngine, runWorker, type WorkerHandle } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from './helpers.js';

const fast = { pollMs: 200, stealAfterMs: 50, localityWaitMs: 50 };

describeOnBackends('engine: pause and resume', (backend) => {
  async function setup(prefix: string, workerTypes: (i: number) => string[]) {
    const producer = await backend().connect();
    const world = worldName(prefix);
    const engine = createEngine(producer, { world, buckets: 4, logger: memoryLogger() });
    await engine.init();
    const conns: Coordinator[] = [producer];
    const workers: WorkerHandle[] = [];
    for (let i = 0; i < 3; i++) {
      const wc = await backend().connect();
      conns.push(wc);
      const handlers = Object.fromEntries(workerTypes(i).map((t) => [t, () => t]));
      workers.push(
        runWorker(wc, handlers, { world, concurrency: 2, logger: memoryLogger(), ...fast }),
      );
    }
    const close = async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(conns.map((c) => c.close()));
    };
    return { engine, workers, close };
  }

  it('a paused world is claimed by no worker until it is resumed', async () => {
    const { engine, workers, close } = await setup('pw', () => ['t']);
    expect(await engine.pause()).toEqual({ world: true, types: [] });
    expect(await engine.pauseState()).toEqual({ world: true, types: [] });
    // Every worker has seen the pause through its watch before work arrives.
    await eventually(() => workers.every((w) => w.paused.world));
    for (let i = 0; i < 9; i++) await engine.queue({ name: `j${i}`, type: 't' });
    const resumedAt = Date.now();
    expect(await engine.resume()).toEqual({ world: false, types: [] });
    await eventually(async () => (await engine.counts()).completed === 9);
    for (let i = 0; i < 9; i++) {
      const rec = await engine.task([`j${i}`]);
      // Nothing started while the world was paused.
      expect(rec?.startedAt).toBeGreaterThanOrEqual(resumedAt);
      expect(rec?.attempts).toBe(1);
    }
    await close();
  });

  it('pausing one type stops it on every worker while other types run on', async () => {
    // Each worker runs the paused type and a type of its own: when its own task has run, it
    // has passed over the paused tasks queued before it.
    const { engine, workers, close } = await setup('pt', (i) => ['slow', `own${i}`]);
    expect(await engine.pause({ type: 'slow' })).toEqual({ world: false, types: ['slow'] });
    await eventually(() => workers.every((w) => w.paused.types.includes('slow')));
    for (let i = 0; i < 6; i++) await engine.queue({ name: `s${i}`, type: 'slow' });
    for (let i = 0; i < 3; i++) await engine.queue({ name: `o${i}`, type: `own${i}` });
    await eventually(async () => (await engine.counts()).completed === 3);
    // Each ran its own (its stats count once the completion's reply is in).
    await eventually(() => workers.every((w) => w.stats.completed === 1));
    for (let i = 0; i < 6; i++) {
      const rec = await engine.task([`s${i}`]);
      expect(rec).toMatchObject({ state: 'pending', attempts: 0 });
    }
    expect(await engine.resume({ type: 'slow' })).toEqual({ world: false, types: [] });
    await eventually(async () => (await engine.counts()).completed === 9);
    await close();
  });

  it('names a bad type, and resuming the world resumes its types too', async () => {
    const { engine, close } = await setup('px', () => ['t']);
    await expect(engine.pause({ type: '' })).rejects.toMatchObject({
      code: 'INVALID_TASK',
      message: expect.stringMatching(/type "": must not be empty/),
    });
    expect(await engine.pauseState()).toEqual({ world: false, types: [] });
    await engine.pause({ type: 'b' });
    expect(await engine.pause({ type: 'a' })).toEqual({ world: false, types: ['a', 'b'] });
    expect(await engine.pause()).toEqual({ world: true, types: ['a', 'b'] });
    expect(await engine.resume()).toEqual({ world: false, types: [] });
    await close();
  });
});
