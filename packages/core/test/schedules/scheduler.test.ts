import {
  addSchedule,
  type Coordinator,
  createEngine,
  type Engine,
  isZoottError,
  listSchedules,
  removeSchedule,
  runScheduler,
  type SchedulerHandle,
  schedulesPath,
  type TickEvent,
  tickTaskName,
} from '@zoott/core';
import { decodeJson, listBucket } from '@zoott/core/internal';
import { describeOnBackends, losingReplies } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, TestClock, worldName } from '../engine/helpers.js';

const MINUTE = 60_000;
/** A whole minute, so `* * * * *` ticks fall on exact multiples of MINUTE from here. */
const START = Date.parse('2026-03-26T10:00:00Z');

/** Names of the world's tasks that are pending, sorted. */
async function pendingNames(engine: Engine): Promise<string[]> {
  return (await engine.list('pending')).map((t) => t.key.join('|')).sort();
}

describeOnBackends('schedules', (backend) => {
  async function world(c?: Coordinator) {
    const zk = c ?? (await backend().connect());
    const clock = new TestClock(START);
    const engine = createEngine(zk, { world: worldName('s'), clock, logger: memoryLogger() });
    await engine.init();
    return { zk, clock, engine };
  }

  it('add, list and remove; bad input writes nothing', async () => {
    const { zk, engine } = await world();
    const stored = await addSchedule(engine, {
      name: 'every5',
      cron: '*/5 * * * *',
      tz: 'Europe/Amsterdam',
      type: 'report',
      data: { n: 1 },
    });
    expect(stored.createdAt).toBe(START);
    const listed = await listSchedules(engine);
    expect(listed).toEqual([{ ...stored, nextTick: START + 5 * MINUTE }]);
    const dup = await addSchedule(engine, { name: 'every5', cron: '* * * * *', type: 'x' }).catch(
      (e: unknown) => e,
    );
    expect(String(dup)).toMatch(/already exists/);
    for (const bad of [
      { name: 'b', cron: 'every day', type: 't' },
      { name: 'b', cron: '* * * * *', tz: 'Nowhere/City', type: 't' },
    ]) {
      const err = await addSchedule(engine, bad).catch((e: unknown) => e);
      expect(isZoottError(err, 'INVALID_CONFIG')).toBe(true);
    }
    expect(await zk.children(schedulesPath(engine.world))).toEqual(['every5']);
    expect(await removeSchedule(engine, 'every5')).toBe(true);
    expect(await removeSchedule(engine, 'every5')).toBe(false);
    expect(await listSchedules(engine)).toEqual([]);
    const uninit = createEngine(zk, { world: worldName('none'), logger: memoryLogger() });
    const err = await addSchedule(uninit, { name: 'a', cron: '* * * * *', type: 't' }).catch(
      (e: unknown) => e,
    );
    expect(isZoottError(err, 'WORLD_NOT_INITIALISED')).toBe(true);
  });

  it('queues one task per tick, named after the tick, as the clock moves', async () => {
    const { engine, clock } = await world();
    await addSchedule(engine, { name: 'm', cron: '* * * * *', type: 'tick', data: { a: 1 } });
    const ticks: TickEvent[] = [];
    const s = runScheduler(engine, { onTick: (t) => ticks.push(t), logger: memoryLogger() });
    await eventually(() => s.isLeader);
    for (let i = 1; i <= 3; i++) {
      clock.advance(MINUTE);
      await eventually(() => ticks.length === i);
    }
    expect(ticks.map((t) => t.tick)).toEqual([1, 2, 3].map((i) => START + i * MINUTE));
    expect(ticks.every((t) => t.queued)).toBe(true);
    const names = [1, 2, 3].map((i) => tickTaskName('m', START + i * MINUTE));
    expect(await pendingNames(engine)).toEqual(names);
    const task = await engine.task([names[0]!]);
    expect(task).toMatchObject({ type: 'tick', data: { a: 1 }, state: 'pending' });
    expect((await listSchedules(engine))[0]?.lastTick).toBe(START + 3 * MINUTE);
    await s.stop();
  });

  it("writes a tick's task as queue writes a root task: same tree node, same entry", async () => {
    const { engine, clock, zk } = await world();
    await addSchedule(engine, { name: 'm', cron: '* * * * *', type: 'tick', data: { a: 1 } });
    const ticks: TickEvent[] = [];
    const scheduler = runScheduler(engine, { onTick: (t) => ticks.push(t) });
    await eventually(() => scheduler.isLeader);
    clock.advance(MINUTE);
    await eventually(() => ticks.length === 1);
    await scheduler.stop();
    await engine.queue({ name: 'byHand', type: 'tick', data: { a: 1 } });
    const { layout } = await engine.context();
    const written = async (name: string) => {
      const { pending } = await listBucket(zk, layout, layout.bucketOf([name]), ['pending']);
      const entry = pending.find((listed) => listed.encodedKey === name);
      if (!entry) throw new Error(`no pending entry for ${name}`);
      const data = decodeJson<Record<string, unknown>>((await zk.get(entry.path)).data, entry.path);
      const treePath = layout.treePath([name]);
      const tree = decodeJson<Record<string, unknown>>((await zk.get(treePath)).data, treePath);
      return { entry, data, tree };
    };
    const tick = await written(ticks[0]!.task);
    const byHand = await written('byHand');
    expect(tick.tree).toEqual({ ...byHand.tree, name: ticks[0]!.task });
    expect(Object.keys(tick.data).sort()).toEqual(Object.keys(byHand.data).sort());
    const { qid: tickQid, queuedAt: tickAt, name: tickName, ...tickRest } = tick.data;
    const { qid: handQid, queuedAt: handAt, name: _handName, ...handRest } = byHand.data;
    expect(tickRest).toEqual(handRest);
    expect(tickName).toBe(ticks[0]!.task);
    expect([typeof tickQid, typeof tickAt]).toEqual([typeof handQid, typeof handAt]);
    expect(tickQid).not.toBe(handQid);
    expect([tick.entry.kind, tick.entry.priority]).toEqual([
      byHand.entry.kind,
      byHand.entry.priority,
    ]);
  });

  it('one scheduler among several; the next one takes over where the first stopped', async () => {
    const { engine, clock, zk } = await world();
    await addSchedule(engine, { name: 'm', cron: '* * * * *', type: 'tick' });
    const seen: TickEvent[] = [];
    const schedulers: SchedulerHandle[] = [];
    for (let i = 0; i < 3; i++) {
      const c = i === 0 ? zk : await backend().connect();
      const e = createEngine(c, { world: engine.world, clock, logger: memoryLogger() });
      schedulers.push(runScheduler(e, { onTick: (t) => seen.push(t) }));
    }
    await eventually(() => schedulers.some((s) => s.isLeader));
    clock.advance(MINUTE);
    await eventually(() => seen.length === 1);
    expect(schedulers.filter((s) => s.isLeader)).toHaveLength(1);
    const first = schedulers.find((s) => s.isLeader)!;
    await first.stop();
    await eventually(() => schedulers.some((s) => s !== first && s.isLeader));
    clock.advance(2 * MINUTE);
    await eventually(() => seen.length === 3);
    expect(seen.map((t) => t.tick)).toEqual([1, 2, 3].map((i) => START + i * MINUTE));
    expect(await pendingNames(engine)).toEqual(
      [1, 2, 3].map((i) => tickTaskName('m', START + i * MINUTE)),
    );
    for (const s of schedulers) await s.stop();
  });

  it('hears of a schedule added after it was elected; stops ticking one removed', async () => {
    const { engine, clock } = await world();
    const seen: TickEvent[] = [];
    const s = runScheduler(engine, { onTick: (t) => seen.push(t) });
    await eventually(() => s.isLeader);
    await addSchedule(engine, { name: 'late', cron: '* * * * *', type: 'tick' });
    clock.advance(MINUTE);
    await eventually(() => seen.length === 1);
    await removeSchedule(engine, 'late');
    await addSchedule(engine, { name: 'other', cron: '*/2 * * * *', type: 'tick' });
    clock.advance(MINUTE);
    await eventually(() => seen.length === 2);
    expect(seen.map((t) => t.task)).toEqual([
      tickTaskName('late', START + MINUTE),
      tickTaskName('other', START + 2 * MINUTE),
    ]);
    await s.stop();
  });

  it('a world that was never initialised: done rejects, nothing else happens', async () => {
    const zk = await backend().connect();
    const engine = createEngine(zk, { world: worldName('none'), logger: memoryLogger() });
    const s = runScheduler(engine, { logger: memoryLogger() });
    const err = await s.done.catch((e: unknown) => e);
    expect(isZoottError(err, 'WORLD_NOT_INITIALISED')).toBe(true);
    await s.stop();
  });

  it('a node in the schedules folder that is not a schedule is reported and skipped', async () => {
    const { zk, clock } = await world();
    const corrupt: string[] = [];
    const engine = createEngine(zk, {
      world: worldName('c'),
      clock,
      logger: memoryLogger(),
      onCorrupt: (n) => corrupt.push(`${n.path}: ${n.reason}`),
    });
    await engine.init();
    await addSchedule(engine, { name: 'good', cron: '* * * * *', type: 'tick' });
    await zk.create(`${schedulesPath(engine.world)}/junk`, new TextEncoder().encode('{oops'));
    expect((await listSchedules(engine)).map((s) => s.name)).toEqual(['good']);
    expect(corrupt).toEqual([
      `${schedulesPath(engine.world)}/junk: data is not JSON: not a schedule`,
    ]);
    const seen: TickEvent[] = [];
    const s = runScheduler(engine, { onTick: (t) => seen.push(t), logger: memoryLogger() });
    await eventually(() => s.isLeader);
    clock.advance(MINUTE);
    await eventually(() => seen.length === 1);
    expect(seen[0]?.schedule).toBe('good');
    await s.stop();
  });

  it('catches up on ticks missed while no scheduler ran, up to maxCatchUp', async () => {
    const { engine, clock } = await world();
    await addSchedule(engine, { name: 'm', cron: '* * * * *', type: 'tick' });
    clock.advance(5 * MINUTE);
    const seen: TickEvent[] = [];
    const s = runScheduler(engine, { maxCatchUp: 3, onTick: (t) => seen.push(t) });
    await eventually(() => seen.length === 3);
    expect(seen.map((t) => t.tick)).toEqual([3, 4, 5].map((i) => START + i * MINUTE));
    await s.stop();
  });

  it('a tick whose task is already there is not queued again', async () => {
    const { engine, clock } = await world();
    await addSchedule(engine, { name: 'm', cron: '* * * * *', type: 'tick' });
    // A scheduler before this one queued the tick's task but its progress was lost (the
    // schedule removed and added again, say): the deterministic name finds it.
    const name = tickTaskName('m', START + MINUTE);
    await engine.queue({ name, type: 'tick', data: 'first' });
    const seen: TickEvent[] = [];
    const s = runScheduler(engine, { onTick: (t) => seen.push(t) });
    clock.advance(MINUTE);
    await eventually(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ task: name, queued: false });
    expect(await pendingNames(engine)).toEqual([name]);
    expect((await engine.task([name]))?.data).toBe('first');
    await s.stop();
  });

  it('a scheduler with a stale view cannot queue a tick another one already took', async () => {
    const { engine, clock, zk } = await world();
    await addSchedule(engine, { name: 'm', cron: '* * * * *', type: 'tick' });
    // This scheduler hears of no change to the schedule (its watches are dropped), as one
    // that has not yet seen another leader's write; its refused multis are recorded.
    const refused: string[] = [];
    const deaf = new Proxy(zk, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        if (prop === 'get' || prop === 'children')
          return (path: string) => (value as (p: string) => unknown).call(target, path);
        if (prop === 'multi')
          return (ops: Parameters<Coordinator['multi']>[0]) =>
            target.multi(ops).catch((err: unknown) => {
              refused.push((err as { code?: string }).code ?? '?');
              throw err;
            });
        return value.bind(target);
      },
    });
    const e = createEngine(deaf, { world: engine.world, clock, logger: memoryLogger() });
    const s = runScheduler(e, { onTick: () => refused.push('queued') });
    await eventually(() => s.isLeader);
    // Another scheduler took the next tick (and its task was cancelled since).
    const path = `${schedulesPath(engine.world)}/m`;
    const got = await zk.get(path);
    const stored = JSON.parse(new TextDecoder().decode(got.data)) as Record<string, unknown>;
    await zk.set(
      path,
      new TextEncoder().encode(JSON.stringify({ ...stored, lastTick: START + MINUTE })),
    );
    clock.advance(MINUTE);
    await eventually(() => refused.length > 0);
    expect(refused).toEqual(['BAD_VERSION']);
    expect(await pendingNames(engine)).toEqual([]);
    await s.stop();
  });

  it('a lost tick reply neither loses nor doubles the tick', async () => {
    const { zk } = await world();
    const losing = losingReplies(zk);
    const clock = new TestClock(START);
    const engine = createEngine(losing.c, { world: worldName('l'), clock, logger: memoryLogger() });
    await engine.init();
    await addSchedule(engine, { name: 'm', cron: '* * * * *', type: 'tick' });
    const seen: TickEvent[] = [];
    const s = runScheduler(engine, { onTick: (t) => seen.push(t) });
    await eventually(() => s.isLeader);
    for (const [i, loss] of [
      [1, 'after'],
      [2, 'before'],
    ] as const) {
      losing.lose(loss, { when: (ops) => ops[0]?.op === 'set' });
      clock.advance(MINUTE);
      await eventually(() => seen.length === i);
    }
    expect(await pendingNames(engine)).toEqual(
      [1, 2].map((i) => tickTaskName('m', START + i * MINUTE)),
    );
    await s.stop();
  });
});
