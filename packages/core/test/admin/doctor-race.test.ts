import {
  addSchedule,
  type Coordinator,
  createEngine,
  type Engine,
  runWorker,
  utf8,
} from '@zoott/core';
import { diagnoseWorld, encodeJson, type Finding, repairWorld } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, intercept, memoryLogger, worldName } from '../engine/helpers.js';

/*
 * Doctor on a world that changes while it reads and repairs: a repair must never move a
 * node that is valid at the moment of the move. Each case steps in between two of doctor's
 * requests (intercept) to make the change land exactly there.
 */

/** A fresh one-bucket world, an engine on it, and its layout. */
async function world(c: Coordinator) {
  const name = worldName('docr');
  const engine = createEngine(c, { world: name, buckets: 1, logger: memoryLogger() });
  await engine.init();
  return { name, engine, L: (await engine.context()).layout };
}

/** Runs a worker on `name` until task `key` completed. */
async function runsToCompletion(c: Coordinator, name: string, engine: Engine, key: string[]) {
  const worker = runWorker(c, { t: (t) => t.name }, { world: name, logger: memoryLogger() });
  try {
    await eventually(async () => (await engine.task(key))?.state === 'completed');
  } finally {
    await worker.stop();
  }
}

const about = (findings: readonly Finding[], text: string) =>
  findings.filter((f) => f.path.includes(text) || f.detail.includes(text));

describeOnBackends('engine: doctor on a busy world', (backend) => {
  it('a task queued between the reads of its entry and of the tree is no orphan; --repair leaves it and it runs', async () => {
    const c = await backend().connect();
    const { name, engine, L } = await world(c);
    await engine.queue({ name: 'early', type: 't' });
    // A producer queues `late` just before doctor lists the pending bucket: doctor reads its
    // entry, and had it read the tree before, would find no tree node for it.
    let armed = true;
    const seen = intercept(c, 'children', (children) => async (path, options) => {
      if (armed && path === L.bucketPath('p', 0)) {
        armed = false;
        await engine.queue({ name: 'late', type: 't' });
      }
      return children(path, options);
    });
    const ctx = await createEngine(seen, { world: name, logger: memoryLogger() }).context();
    const findings = await diagnoseWorld(ctx);
    expect(armed).toBe(false);
    expect(about(findings, 'late')).toEqual([]);
    expect(await repairWorld(seen, name, findings)).toEqual({ moved: [], notMoved: [] });
    expect((await engine.task(['late']))?.state).toBe('pending');
    await runsToCompletion(await backend().connect(), name, engine, ['late']);
  });

  it('a finding that no longer holds when --repair reaches it is not acted on: the entry of a task whose tree node came back stays and runs', async () => {
    const c = await backend().connect();
    const { name, engine, L } = await world(c);
    await engine.queue({ name: 'k', type: 't', data: { n: 1 } });
    const tree = await c.get(L.treePath(['k']));
    await c.delete(L.treePath(['k']));
    const findings = await diagnoseWorld(await engine.context());
    const entry = findings.find((f) => f.kind === 'orphan')?.path ?? '';
    expect(findings.map((f) => `${f.kind} ${f.path}`)).toEqual([`orphan ${entry}`]);
    // A copy of the findings (read back from --json, say) says nothing of how to check them
    // again, so nothing is moved on its word.
    expect(
      await repairWorld(
        c,
        name,
        findings.map((f) => ({ ...f })),
      ),
    ).toEqual({
      moved: [],
      notMoved: [{ path: entry, kind: 'orphan', why: 'not rechecked' }],
    });
    // Put back (by hand, or by a restore) after the diagnosis, before the repair.
    await c.create(L.treePath(['k']), tree.data);
    const outcome = await repairWorld(c, name, findings);
    expect(outcome).toEqual({
      moved: [],
      notMoved: [{ path: entry, kind: 'orphan', why: 'no longer damaged' }],
    });
    expect(await c.exists(entry)).not.toBeNull();
    await runsToCompletion(await backend().connect(), name, engine, ['k']);
  });

  it('a change between that second look and the move fails the move: a tree node made, a ghost claim replaced by a live one, a schedule written again, a completed record removed', async () => {
    const c = await backend().connect();
    const { name, engine, L } = await world(c);
    const other = createEngine(await backend().connect(), { world: name, logger: memoryLogger() });
    await engine.queue({ name: 'orphan', type: 't' });
    await engine.queue({ name: 'ghost', type: 'g' });
    const orphanTree = await c.get(L.treePath(['orphan']));
    await c.delete(L.treePath(['orphan']));
    const ghost = L.recordPath('w', ['ghost']);
    await c.create(ghost, encodeJson({ worker: 'gone', session: '0', at: 1 }));
    await addSchedule(engine, { name: 'nightly', cron: '0 2 * * *', type: 't' });
    const schedule = `/zoott_schedules/${name}/nightly`;
    const good = await c.get(schedule);
    await c.set(schedule, utf8.encode('cron: nightly'));
    // Progress left by a completed task (a worker that died before deleting it).
    await engine.queue({ name: 'done', type: 'd' });
    const done = await engine.claim({ types: ['d'] });
    if (done) await engine.complete(done, { ok: true });
    const progress = `/zoott_g/${name}/0000/done`;
    await c.create(`/zoott_g/${name}/0000`);
    await c.create(progress, encodeJson({ attempt: 1, worker: 'w', log: [], dropped: 0 }));
    const findings = await diagnoseWorld(await engine.context());
    const entry = findings.find((f) => f.kind === 'orphan')?.path ?? '';
    expect(findings.map((f) => `${f.kind} ${f.path}`).sort()).toEqual(
      [
        `not-ephemeral ${ghost}`,
        `orphan ${entry}`,
        `corrupt ${schedule}`,
        `stale ${progress}`,
      ].sort(),
    );
    // Just before each move's multi (after repair read everything again): the orphan's tree
    // node comes back; another session claims `ghost` (its claim removes the ghost claim and
    // makes a live one at the same path, the same version); the schedule is fixed by hand;
    // the completed record goes (as the reaper removes that of a task with children, whose
    // tree node it leaves as it was): the progress node is then no longer stale.
    let live: Awaited<ReturnType<Engine['claim']>> = null;
    const racing: Record<string, () => Promise<unknown>> = {
      [entry]: () => c.create(L.treePath(['orphan']), orphanTree.data),
      [ghost]: async () => {
        // The first try finds the ghost claim and removes it; the next one claims.
        for (let i = 0; i < 5 && !live; i++) live = await other.claim({ types: ['g'] });
      },
      [schedule]: () => c.set(schedule, good.data),
      [progress]: () => c.delete(L.recordPath('c', ['done'])),
    };
    const stepping = intercept(c, 'multi', (multi) => async (ops) => {
      const moving = ops.at(-1)?.path ?? '';
      const change = racing[moving];
      delete racing[moving];
      await change?.();
      return multi(ops);
    });
    const outcome = await repairWorld(stepping, name, findings);
    expect(Object.keys(racing)).toEqual([]);
    expect(outcome.moved).toEqual([]);
    expect(outcome.notMoved.map((n) => `${n.why} ${n.path}`).sort()).toEqual(
      [entry, ghost, schedule, progress].map((path) => `changed while moving ${path}`).sort(),
    );
    expect(utf8.decode((await c.get(schedule)).data)).toBe(utf8.decode(good.data));
    // The live claim is still there, and completes; the task with its tree node back runs.
    expect(live).not.toBeNull();
    expect((await c.exists(ghost))?.ephemeralOwner).not.toBeNull();
    if (live) await other.complete(live, { ok: true });
    expect((await engine.task(['ghost']))?.state).toBe('completed');
    await runsToCompletion(await backend().connect(), name, engine, ['orphan']);
  });
});
