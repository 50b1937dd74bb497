import { createEngine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from './helpers.js';

interface Tasks {
  request: { data: { url: string } };
  download: { data: { url: string } };
}

/** What the engine stores for a task, without the times that differ between two runs. */
function stored(record: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!record) return null;
  const { queuedAt: _q, ...rest } = record;
  return rest;
}

describeOnBackends('engine: the two forms of queue', (backend) => {
  it('the named form places and configures a task exactly as the positional form', async () => {
    const c = await backend().connect();
    const worlds = [worldName(), worldName()];
    const [named, positional] = worlds.map((world) =>
      createEngine<Tasks>(c, { world, buckets: 2, logger: memoryLogger() }),
    );
    if (!named || !positional) throw new Error('two engines');
    for (const e of [named, positional]) {
      await e.init();
      await e.queue({ name: 'req_a', type: 'request', data: { url: 'a' } });
      await e.queue({ name: 'req_b', type: 'request', data: { url: 'b' } });
    }
    const childName = (parent: string, child: string) => `${child}_${parent.slice(4)}`;
    const options = {
      priority: 7,
      maxAttempts: 5,
      backoff: { baseMs: 10, maxMs: 100 },
      hints: { server: 'h1' },
      notBefore: 1_000,
    };
    const a = await named.queue({
      name: 'dl',
      type: 'download',
      data: { url: 'x' },
      parent: { name: 'req_.*', type: 'request' },
      childName,
      ...options,
    });
    const b = await positional.queue(
      { name: 'dl', type: 'download', data: { url: 'x' } },
      { name: 'req_.*', type: 'request' },
      childName,
      options,
    );
    expect(a.map((q) => q.key)).toEqual([
      ['req_a', 'dl_a'],
      ['req_b', 'dl_b'],
    ]);
    expect(b.map((q) => q.key)).toEqual(a.map((q) => q.key));
    for (const key of a.map((q) => q.key)) {
      const r = stored((await named.task(key)) as Record<string, unknown> | null);
      expect(r).toMatchObject({
        type: 'download',
        data: { url: 'x' },
        priority: 7,
        maxAttempts: 5,
      });
      expect(r).toEqual(stored((await positional.task(key)) as Record<string, unknown> | null));
    }
    // `{ key }` places under one exact parent in the named form too.
    const [under] = await named.queue({
      name: 'one',
      type: 'download',
      data: { url: 'y' },
      parent: { key: ['req_a'] },
    });
    expect(under?.key).toEqual(['req_a', 'one']);
  });

  it('refuses an unknown or misspelt field from untyped callers, writing nothing', async () => {
    const c = await backend().connect();
    const engine = createEngine(c, { world: worldName(), buckets: 2, logger: memoryLogger() });
    await engine.init();
    // What a JavaScript caller (no compile-time check) can send.
    const loose = engine.queue.bind(engine) as (request: object) => Promise<unknown>;
    await expect(loose({ nmae: 'a', type: 't' })).rejects.toMatchObject({
      code: 'INVALID_TASK',
      field: 'nmae',
      message: expect.stringMatching(
        /nmae: unknown queue field \(allowed: name, type, data, parent/,
      ),
    });
    await expect(loose({ name: 'a', type: 't', priorty: 1 })).rejects.toMatchObject({
      code: 'INVALID_TASK',
      field: 'priorty',
    });
    await expect(loose({ name: 'a', type: 't', childName: 'a_x' })).rejects.toMatchObject({
      code: 'INVALID_TASK',
      field: 'childName',
    });
    await expect(loose({ name: 'a', type: 't', priority: 1.5 })).rejects.toMatchObject({
      code: 'INVALID_TASK',
    });
    // The positional form keeps options out of the task info.
    const positional = engine.queue.bind(engine) as (
      info: object,
      parent: null,
    ) => Promise<unknown>;
    await expect(positional({ name: 'a', type: 't', priority: 1 }, null)).rejects.toMatchObject({
      code: 'INVALID_TASK',
      field: 'priority',
    });
    expect(await engine.counts()).toEqual({ pending: 0, working: 0, completed: 0, failed: 0 });
    expect(await engine.tree()).toEqual([]);
  });
});
