import { type Coordinator, createEngine, type Op, ZoottError } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { counting, memoryLogger, worldName } from './helpers.js';

/** Tasks one queue multi creates: one pending entry each. */
const tasksIn = (ops: readonly Op[]) => ops.filter((o) => o.path.includes('/zoott_p/')).length;

describeOnBackends('engine: queueMany', (backend) => {
  async function setup(wrap: (c: Coordinator) => Coordinator = (c) => c) {
    const wire = counting(wrap(await backend().connect()));
    const engine = createEngine(wire.c, { world: worldName(), buckets: 4, logger: memoryLogger() });
    await engine.init();
    wire.ops.length = 0;
    return { engine, wire };
  }

  it('queues many tasks in few multis, in order, each runnable', async () => {
    const { engine, wire } = await setup();
    const names = Array.from({ length: 1200 }, (_, i) => `t${i}`);
    const out = await engine.queueMany(names.map((name) => ({ name, type: 't', data: { name } })));
    expect(out.map((q) => q.key)).toEqual(names.map((n) => [n]));
    expect(out.every((q) => q.previous === null && /-\d{10}$/.test(q.entry))).toBe(true);
    expect(wire.ops.map(tasksIn)).toEqual([500, 500, 200]);
    expect(await engine.counts()).toMatchObject({ pending: 1200 });
    // Queue order holds across groups: claims follow it.
    const claims = await engine.claimMany(3, { worker: 'w' });
    expect(claims.map((c) => c.name)).toEqual(['t0', 't1', 't2']);
    expect(await engine.task(['t700'])).toMatchObject({ state: 'pending', data: { name: 't700' } });
  });

  it('keeps each multi under half the request limit: large tasks go fewer at a time', async () => {
    const { engine, wire } = await setup();
    // 100 KB of data, written twice per task (tree node and entry): two tasks fit 512 KiB.
    const data = 'x'.repeat(100_000);
    await engine.queueMany(['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, type: 't', data })));
    expect(wire.ops.map(tasksIn)).toEqual([2, 2, 1]);
    expect(await engine.counts()).toMatchObject({ pending: 5 });
  });

  it('splits a group the client refuses as too large, queueing each task once', async () => {
    // A client with a smaller request limit than ZooKeeper's default refuses big multis.
    const small = (c: Coordinator) =>
      new Proxy(c, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver);
          if (prop !== 'multi') return typeof v === 'function' ? v.bind(target) : v;
          return (ops: readonly Op[]) =>
            ops.length > 6
              ? Promise.reject(new ZoottError('BAD_ARGUMENTS', 'request too large (test)'))
              : target.multi(ops);
        },
      });
    const { engine, wire } = await setup(small);
    const names = Array.from({ length: 10 }, (_, i) => `t${i}`);
    const out = await engine.queueMany(names.map((name) => ({ name, type: 't' })));
    expect(out.map((q) => q.key[0])).toEqual(names);
    // 10 → 5 + 5 (refused) → 3 + 2 + 3 + 2.
    expect(wire.ops.map(tasksIn)).toEqual([10, 5, 3, 2, 5, 3, 2]);
    expect(await engine.counts()).toMatchObject({ pending: 10 });
  });

  it('children under a parent queued earlier in the same call; a re-queue inside a group', async () => {
    const { engine } = await setup();
    await engine.queue({ name: 'old', type: 't' });
    const claim = await engine.claim({ worker: 'w' });
    await engine.complete(claim!, 'done');
    const out = await engine.queueMany([
      { name: 'p', type: 't' },
      { name: 'c', type: 't', parent: { key: ['p'] } },
      { name: 'old', type: 't', data: 2 },
      { name: 'named', type: 't', parent: { key: ['p'] }, childName: (p, n) => `${p}-${n}` },
    ]);
    expect(out.map((q) => [q.key.join('|'), q.previous])).toEqual([
      ['p', null],
      ['p|c', null],
      ['old', 'completed'],
      ['p|p-named', null],
    ]);
    expect(await engine.task(['old'])).toMatchObject({ state: 'pending', data: 2 });
    expect(await engine.counts()).toMatchObject({ pending: 4, completed: 0 });
  });

  it('a task whose parent does not exist: a clear error, the tasks before it queued, nothing of it written', async () => {
    const { engine } = await setup();
    const call = engine.queueMany([
      { name: 'a', type: 't' },
      { name: 'b', type: 't' },
      { name: 'orphan', type: 't', parent: { key: ['missing'] } },
      { name: 'd', type: 't' },
    ]);
    await expect(call).rejects.toMatchObject({ code: 'NO_SUCH_TASK', field: 'tasks[2]' });
    await expect(call).rejects.toThrow(
      /tasks\[2\]: parent missing does not exist .*; tasks\[0\.\.1\] were queued, tasks\[2\.\.\] were not/,
    );
    expect((await engine.list()).map((t) => t.key.join('|')).sort()).toEqual(['a', 'b']);
    expect(await engine.tree()).toHaveLength(2);
  });

  it('bad input is refused before anything is written, naming the task', async () => {
    const { engine, wire } = await setup();
    const ok = { name: 'fine', type: 't' };
    const cases: [unknown, RegExp][] = [
      [[ok, { name: 'bad/name', type: 't' }], /^INVALID_TASK: tasks\[1\]: .*name/],
      [[ok, { name: 'x', type: 't', color: 1 }], /tasks\[1\]: color: unknown queue field/],
      [
        [{ name: 'x', type: 't', parent: { name: 'p.*' } }],
        /tasks\[0\]: parent: queueMany takes an exact parent/,
      ],
      [[{ name: 'x', type: 't', priority: 0.5 }], /tasks\[0\]: .*priority/],
      [[ok, 'text'], /tasks\[1\]: must be an object/],
      [
        [{ name: 'x', type: 't', childName: () => 'y' }],
        /tasks\[0\]: childName: only applies with a parent/,
      ],
      ['not an array', /tasks: must be an array/],
    ];
    for (const [input, message] of cases) {
      const call = engine.queueMany(input as never);
      await expect(call).rejects.toMatchObject({ code: 'INVALID_TASK' });
      await expect(call).rejects.toThrow(message);
    }
    await expect(engine.queueMany([ok, { name: 'y', type: 't' }])).resolves.toHaveLength(2);
    // Only the last, valid call wrote anything.
    expect(wire.ops).toHaveLength(1);
  });

  it('an empty list queues nothing', async () => {
    const { engine, wire } = await setup();
    expect(await engine.queueMany([])).toEqual([]);
    expect(wire.ops).toHaveLength(0);
  });
});
