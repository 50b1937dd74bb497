/**
 * Doctor finds squatting: nodes a world needs that exist with an ACL its principal cannot
 * use, in every area (elections, replies, races, progress, schedules, limits, registry, the
 * completed records retention removes), and shared area nodes someone else holds. It says
 * what only an administrator can run, and `--repair` (repairWorld) leaves them. A second
 * client with its own digest credentials (mallory) plays the squatter.
 */
import { type Acl, createEngine, digestAcl, OPEN_ACL, Perms } from '@zoott/core';
import { diagnoseWorld, type Finding, repairWorld, SHARED_ACL } from '@zoott/core/internal';
import { type Backend, describeOnBackends, legacyInit } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from '../engine/helpers.js';

const ALICE: Acl[] = [digestAcl('alice', 'pw-a', 'cdrwa')];
const MALLORY: Acl[] = [digestAcl('mallory', 'pw-m', 'cdrwa')];
/** Mallory's, but readable by anyone: the report can say whose it is. */
const MALLORY_SHOWN: Acl[] = [...MALLORY, { scheme: 'world', id: 'anyone', perms: Perms.READ }];

const mallory = (backend: () => Backend) =>
  backend().connect({ auth: 'mallory:pw-m', defaultAcl: MALLORY });

const byKind = (fs: readonly Finding[], kind: Finding['kind']) =>
  fs
    .filter((f) => f.kind === kind)
    .map((f) => f.path)
    .sort();

describeOnBackends('engine: doctor finds squatted nodes', (backend) => {
  it('in every area of an open world: reported with the admin command, left by repair', async () => {
    const c = await backend().connect();
    const world = worldName('sq');
    const engine = createEngine(c, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    const ctx = await engine.context();
    expect(await diagnoseWorld(ctx)).toEqual([]);
    // An open world lets anyone change its nodes' ACLs, or make nodes in it with their own.
    const m = await mallory(backend);
    const squatted = {
      leaders: `/zoott_leaders/${world}/scheduler`,
      replies: `/zoott_~replies/${world}/_default`,
      races: `/zoott_~races/${world}`,
      progress: `/zoott_g/${world}/0001`,
      schedules: `/zoott_schedules/${world}`,
      limits: `/zoott_limits/${world}`,
      registry: `/zoott_workers/${world}`,
      retention: `/zoott_c/${world}/0000`,
    };
    await m.create(squatted.replies, undefined, { acl: MALLORY_SHOWN });
    await m.create(squatted.progress);
    for (const path of [squatted.leaders, squatted.races, squatted.schedules, squatted.limits])
      await m.setAcl(path, MALLORY_SHOWN);
    for (const path of [squatted.registry, squatted.retention]) await m.setAcl(path, MALLORY);

    const findings = await diagnoseWorld(ctx, { chroot: '/app' });
    expect(byKind(findings, 'squatted')).toEqual(Object.values(squatted).sort());
    for (const f of findings.filter((f) => f.kind === 'squatted')) {
      expect(f.repair).toBe('admin');
      expect(f.detail).toContain("the world's principal world:anyone lacks");
      expect(f.admin).toContain(`setAcl -R /app${f.path} world:anyone:cdrwa`);
    }
    const shown = findings.find((f) => f.path === squatted.leaders);
    expect(shown?.detail).toMatch(
      /^digest:mallory:… cdrwa, world:anyone r: the world's principal world:anyone lacks cdwa here/,
    );
    expect(shown?.admin).toMatch(
      /as digest:mallory:… \(ADMIN on it\) or a ZooKeeper super user\)$/,
    );
    const hidden = findings.find((f) => f.path === squatted.registry);
    expect(hidden?.detail).toMatch(/^an ACL these credentials may not read:/);
    expect(hidden?.admin).toMatch(
      /as a ZooKeeper super user \(nobody holds ADMIN on it\)|as a ZooKeeper super user/,
    );

    // Repair moves nothing of it: it is someone else's to change.
    const out = await repairWorld(c, world, findings);
    expect(out).toEqual({ moved: [], notMoved: [] });
    expect(byKind(await diagnoseWorld(ctx), 'squatted')).toEqual(Object.values(squatted).sort());
    // Once the command is run by its admin, nothing is left.
    for (const path of Object.values(squatted)) await m.setAcl(path, OPEN_ACL);
    expect(await diagnoseWorld(ctx)).toEqual([]);
  });

  it('shared area nodes: one someone else holds, one keeping the world out, and what is missing', async () => {
    const m = await mallory(backend);
    // Every world may make its node in it, but mallory may change that at any time.
    const held = [...MALLORY, { scheme: 'world', id: 'anyone', perms: Perms.CREATE | Perms.READ }];
    await m.create('/zoott_schedules', undefined, { acl: held });
    // Nobody else may make anything in it.
    await m.create('/zoott_~races', undefined, { acl: MALLORY_SHOWN });
    // A world zoott 0.1.0 made: its area nodes with its owner's ACL, none of the newer ones.
    const alice = await backend().connect({ auth: 'alice:pw-a', defaultAcl: ALICE });
    const world = worldName('sq');
    await legacyInit(alice, world, 2);
    const ctx = await createEngine(alice, { world, logger: memoryLogger() }).context();
    const findings = await diagnoseWorld(ctx, { acl: ALICE });
    expect(byKind(findings, 'squatted')).toEqual(['/zoott_~races']);
    expect(findings.find((f) => f.path === '/zoott_~races')).toMatchObject({
      repair: 'admin',
      admin: expect.stringMatching(
        /^setAcl \/zoott_~races world:anyone:cr {3}\(zkCli\.sh, as digest:mallory:… \(ADMIN on it\)/,
      ),
    });
    expect(byKind(findings, 'shared-acl')).toEqual([
      '/zoott_c',
      '/zoott_f',
      '/zoott_g',
      '/zoott_p',
      '/zoott_schedules',
      '/zoott_w',
      '/zoott_workers',
    ]);
    const theirs = findings.find((f) => f.path === '/zoott_schedules');
    expect(theirs).toMatchObject({ repair: 'admin' });
    expect(theirs?.detail).toMatch(/digest:mallory:… may dwa/);
    // Made by this world's own credentials: its init gives them the shared ACL.
    const ours = findings.find((f) => f.path === '/zoott_p');
    expect(ours).toMatchObject({ repair: 'none' });
    expect(ours?.detail).toMatch(
      /only digest:alice:… may create in it.*`zoott init .*` gives it world:anyone cr/,
    );
    expect(byKind(findings, 'missing')).toEqual(
      [
        `/zoott_leaders/${world}`,
        `/zoott_leaders/${world}/scheduler`,
        `/zoott_limits/${world}`,
        `/zoott_q/${world}`,
        `/zoott_schedules/${world}`,
        `/zoott_~parked/${world}`,
        `/zoott_~races/${world}`,
        `/zoott_~replies/${world}`,
        '/zoott_leaders',
        '/zoott_limits',
        '/zoott_q',
        '/zoott_~parked',
        '/zoott_~replies',
      ].sort(),
    );
    // The new init makes what is missing but cannot pass mallory's node: it names it.
    await expect(createEngine(alice, { world, logger: memoryLogger() }).init()).rejects.toThrow(
      /\/zoott_~races, shared by every world of the namespace/,
    );
    await m.setAcl('/zoott_~races', SHARED_ACL);
    await m.setAcl('/zoott_schedules', SHARED_ACL);
    await createEngine(alice, { world, logger: memoryLogger() }).init();
    expect(await diagnoseWorld(ctx, { acl: ALICE })).toEqual([]);
  });

  it('the namespace root, when it keeps a missing shared node from being made', async () => {
    const alice = await backend().connect({ auth: 'alice:pw-a', defaultAcl: ALICE });
    const world = worldName('sq');
    await legacyInit(alice, world, 1);
    const m = await mallory(backend);
    await m.setAcl('/', MALLORY_SHOWN);
    try {
      const ctx = await createEngine(alice, { world, logger: memoryLogger() }).context();
      const root = (await diagnoseWorld(ctx, { acl: ALICE, chroot: '/app' })).find(
        (f) => f.path === '/',
      );
      expect(root).toMatchObject({ kind: 'squatted', repair: 'admin' });
      expect(root?.detail).toMatch(
        /^the namespace root \(the connect string's chroot\) has digest:mallory:… cdrwa, world:anyone r: the world's principal digest:alice:… lacks c there, so the missing \/zoott_q, .* cannot be made/,
      );
      expect(root?.admin).toMatch(
        /^setAcl \/app world:anyone:cr,digest:mallory:<its hash>:cdrwa {3}\(zkCli\.sh, as digest:mallory:…/,
      );
    } finally {
      await m.setAcl('/', OPEN_ACL);
    }
  });
});
