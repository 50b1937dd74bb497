import {
  addSchedule,
  type Coordinator,
  createEngine,
  currentScheduler,
  Perms,
  READ_ACL,
  setRateLimit,
  utf8,
} from '@zoott/core';
import { diagnoseWorld, diagnoseWorldMeta, encodeJson, type Finding } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, repairAll, worldName } from '../engine/helpers.js';

/**
 * A world with one of each node kind the engine writes beside its areas (progress, meta
 * settings, schedules, rate limits, election candidates, registrations), every one first
 * written the engine's way, then damaged by hand with raw coordinator calls.
 */
async function damagedSideNodes(c: Coordinator) {
  const world = worldName('dock');
  const engine = createEngine(c, { world, buckets: 1, logger: memoryLogger() });
  await engine.init();
  for (const name of ['run', 'done', 'bad-progress', 'retried'])
    await engine.queue({ name, type: 't', data: {} });
  const ctx = await engine.context();
  const L = ctx.layout;
  // Written the engine's way: nothing of these is a finding.
  await addSchedule(engine, { name: 'nightly', cron: '0 2 * * *', type: 't' });
  await setRateLimit(engine, 't', '20/s');
  await engine.pause({ type: 'other' });
  const acl = (await c.getAcl(L.root)).acl;
  const clean = await diagnoseWorld(ctx, { acl });
  expect(clean).toEqual([]);

  // Progress: one of a pending task (fine but for its ACL), one of a later attempt, one not progress, one of no task, one of a
  // completed task, one in the wrong bucket, one with a weak ACL.
  const g = `/zoott_g/${world}`;
  const progress = (attempt: number) => encodeJson({ attempt, worker: 'w', log: [], dropped: 0 });
  await c.create(`${g}/0000`);
  await c.create(`${g}/0000/run`, progress(1), { acl: READ_ACL });
  // Attempt 3's node, of a task at attempt 0 (retried, say): attempt 1's writer stops at it.
  await c.create(`${g}/0000/retried`, progress(3));
  await c.create(`${g}/0000/bad-progress`, utf8.encode('{"attempt":'));
  await c.create(`${g}/0000/gone`, progress(1));
  await completeTask(engine, 'done');
  await c.create(`${g}/0000/done`, progress(3));
  await c.create(`${g}/0001`);
  await c.create(`${g}/0001/run`, progress(1));
  // The meta: retention settings the reaper cannot read, a pause that does not hold.
  const meta = JSON.parse(utf8.decode((await c.get(L.root)).data));
  await c.set(
    L.root,
    encodeJson({ ...meta, retention: { completed: { maxAgeMs: -5 } }, paused: 'yes' }),
  );
  // Schedules: not JSON, stored under another name, a cron that never reads, a weak ACL.
  const s = `/zoott_schedules/${world}`;
  const sched = (name: string, cron = '* * * * *') =>
    encodeJson({ name, cron, type: 't', createdAt: 1 });
  await c.create(`${s}/garbled`, utf8.encode('cron: daily'));
  await c.create(`${s}/moved`, sched('elsewhere'));
  await c.create(`${s}/badcron`, sched('badcron', 'every day'));
  await c.setAcl(`${s}/nightly`, READ_ACL);
  // Rate limits: not a rate, stored under another type's name, a weak ACL.
  const l = `/zoott_limits/${world}`;
  await c.create(`${l}/u`, encodeJson({ type: 'u', rate: 'fast' }));
  await c.create(`${l}/v`, encodeJson({ type: 'x y', rate: '1/s' }));
  await c.setAcl(`${l}/t`, READ_ACL);
  // The scheduler's election: a candidate no session owns, a live one with bad data and one
  // with a weak ACL; a registration with a weak ACL.
  // (`init` made the election's node.)
  const e = `/zoott_leaders/${world}/scheduler`;
  await c.create(`${e}/c-ghost-0000000001`, encodeJson({ id: 'ghost' }));
  await c.create(`${e}/c-live-0000000002`, utf8.encode('x'), { ephemeral: true });
  await c.create(`${e}/c-open-0000000003`, encodeJson({ id: 'o' }), {
    ephemeral: true,
    acl: READ_ACL,
  });
  await c.create(`${L.registry}/worker-0000000007`, encodeJson({ id: 'w', types: ['t'] }), {
    ephemeral: true,
    acl: READ_ACL,
  });
  // Folders the engine made, given an ACL other than the world's, without ADMIN (repair can
  // still work in them, but nobody may set their ACL back: squatted, as the READ_ACL nodes).
  const notAdmin = [{ scheme: 'world', id: 'anyone', perms: Perms.ALL & ~Perms.ADMIN }];
  for (const folder of [g, s, l, e]) await c.setAcl(folder, notAdmin);
  return { world, engine, ctx, acl, g, s, l, e };
}

/** Claims and completes one task by name (the others are released again). */
async function completeTask(engine: ReturnType<typeof createEngine>, name: string) {
  for (;;) {
    const claim = await engine.claim({ types: ['t'] });
    if (!claim) throw new Error(`${name} was not claimed`);
    if (claim.key[0] === name) {
      await engine.complete(claim, { ok: true });
      return;
    }
    await engine.release(claim);
  }
}

const summary = (fs: readonly Finding[]) => fs.map((f) => `${f.kind} ${f.path} ${f.repair}`);

describeOnBackends('engine: doctor on the nodes beside the areas', (backend) => {
  it('reports each damaged kind with the parser the engine reads it with; repair moves what the engine ignores and a second look finds only settings', async () => {
    const c = await backend().connect();
    const { world, engine, ctx, acl, g, s, l, e } = await damagedSideNodes(c);
    const root = ctx.layout.root;
    const findings = await diagnoseWorld(ctx, { acl });
    expect(summary(findings).sort()).toEqual(
      [
        `corrupt ${g}/0000/bad-progress quarantine`,
        `orphan ${g}/0000/gone quarantine`,
        `stale ${g}/0000/done quarantine`,
        `stale ${g}/0000/retried quarantine`,
        `squatted ${g}/0000/run admin`,
        `corrupt ${g}/0001/run quarantine`,
        `corrupt ${root} none`,
        `corrupt ${root} none`,
        `corrupt ${s}/garbled quarantine`,
        `corrupt ${s}/moved none`,
        `corrupt ${s}/badcron none`,
        `squatted ${s}/nightly admin`,
        `corrupt ${l}/u quarantine`,
        `corrupt ${l}/v none`,
        `squatted ${l}/t admin`,
        `not-ephemeral ${e}/c-ghost-0000000001 quarantine`,
        `corrupt ${e}/c-live-0000000002 none`,
        `squatted ${e}/c-open-0000000003 admin`,
        `squatted ${ctx.layout.registry}/worker-0000000007 admin`,
        `squatted ${g} admin`,
        `squatted ${s} admin`,
        `squatted ${l} admin`,
        `squatted ${e} admin`,
      ].sort(),
    );
    const details = (path: string) => findings.filter((f) => f.path === path).map((f) => f.detail);
    expect(details(root).join('\n')).toMatch(/retention\.completed\.maxAgeMs: -5/);
    expect(details(root).join('\n')).toMatch(/paused: not an object/);
    expect(details(`${s}/badcron`)[0]).toMatch(/^schedule: cron: "every day"/);
    expect(details(`${s}/moved`)[0]).toMatch(/named "elsewhere"/);

    // The ghost candidate stands first in line: it is the scheduler no worker is.
    expect(await currentScheduler(engine)).toBe('ghost');
    await repairAll(c, world, findings);
    // What is left is exactly what was reported only: settings and ACLs.
    const again = await diagnoseWorld(ctx, { acl });
    expect(summary(again).sort()).toEqual(
      summary(findings.filter((f) => f.repair === 'none' || f.repair === 'admin')).sort(),
    );
    // Nobody holds ADMIN on them: a super user must give them the world's ACL back.
    for (const f of again.filter((f) => f.kind === 'squatted'))
      expect(f.admin).toMatch(
        new RegExp(
          `^setAcl -R ${f.path} world:anyone:cdrwa {3}\\(zkCli\\.sh, as a ZooKeeper super user`,
        ),
      );
    expect(await c.exists(`${e}/c-ghost-0000000001`)).toBeNull();
    expect(await currentScheduler(engine)).toBe('o');
    expect(await c.exists(`${g}/0000/done`)).toBeNull();
    // Settings reported only stay as they were.
    expect(await c.exists(`${s}/badcron`)).not.toBeNull();
  });

  it('a world meta without a bucket count is the one finding, naming the count its pending area shows', async () => {
    const c = await backend().connect();
    const world = worldName('docm');
    expect(await diagnoseWorldMeta(c, world)).toBeNull(); // no world: the engine says so
    const engine = createEngine(c, { world, buckets: 3, logger: memoryLogger() });
    await engine.init();
    expect(await diagnoseWorldMeta(c, world)).toBeNull();
    const root = (await engine.context()).layout.root;
    for (const bad of ['{"zoott":1}', 'not json']) {
      await c.set(root, utf8.encode(bad));
      const found = await diagnoseWorldMeta(c, world);
      expect(found).toMatchObject({ kind: 'corrupt', path: root, repair: 'none' });
      expect(found?.detail).toContain('{"zoott":1,"buckets":3}');
    }
    // Written back as it says, the world opens again.
    await c.set(root, utf8.encode('{"zoott":1,"buckets":3}'));
    expect(await diagnoseWorldMeta(c, world)).toBeNull();
    const again = createEngine(c, { world, logger: memoryLogger() });
    expect(await diagnoseWorld(await again.context())).toEqual([]);
  });
});
