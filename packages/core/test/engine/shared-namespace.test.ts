/**
 * One namespace, several principals. `init` makes every node a world needs beside its tree
 * (its node in every area, its scheduler election) with the world's ACL, and the area nodes
 * every world shares with an ACL nobody can lock; a node someone else made first is refused
 * with its name, its ACL and the command only its admins can run. A second client with its
 * own digest credentials (mallory) plays the squatter.
 */
import {
  type Acl,
  addSchedule,
  type Coordinator,
  createEngine,
  digestAcl,
  OPEN_ACL,
  Perms,
  runScheduler,
  setRateLimit,
} from '@zoott/core';
import {
  adminCommand,
  ensureNamespace,
  NamespaceError,
  progressReporter,
  repairWorld,
  SHARED_ACL,
  sharedParents,
  worldRoot,
  worldSideNodes,
} from '@zoott/core/internal';
import { type Backend, describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from './helpers.js';

const ALICE: Acl[] = [digestAcl('alice', 'pw-a', 'cdrwa')];
const BOB: Acl[] = [digestAcl('bob', 'pw-b', 'cdrwa')];
const MALLORY: Acl[] = [digestAcl('mallory', 'pw-m', 'cdrwa')];
const READABLE: Acl = { scheme: 'world', id: 'anyone', perms: Perms.READ };

const as = (backend: () => Backend, user: 'alice' | 'bob' | 'mallory') =>
  backend().connect({
    auth: `${user}:pw-${user[0]}`,
    defaultAcl: { alice: ALICE, bob: BOB, mallory: MALLORY }[user],
  });

async function initError(c: Coordinator, world: string): Promise<NamespaceError> {
  const err = await createEngine(c, { world, buckets: 2, logger: memoryLogger() })
    .init()
    .then(
      () => null,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(NamespaceError);
  return err as NamespaceError;
}

describeOnBackends('engine: worlds sharing a namespace', (backend) => {
  it('init makes the world its node in every area with its ACL, and the shared ones world:anyone cr', async () => {
    const alice = await as(backend, 'alice');
    const world = worldName();
    await createEngine(alice, { world, buckets: 2, logger: memoryLogger() }).init();
    for (const path of [...worldSideNodes(world), worldRoot(world)])
      expect({ path, acl: (await alice.getAcl(path)).acl }).toEqual({ path, acl: ALICE });
    for (const path of sharedParents())
      expect({ path, acl: (await alice.getAcl(path)).acl }).toEqual({ path, acl: [...SHARED_ACL] });
  });

  it('a second set of credentials inits beside a locked world, and neither touches the other', async () => {
    const [alice, bob] = [await as(backend, 'alice'), await as(backend, 'bob')];
    const [a, b] = [worldName(), worldName()];
    await createEngine(alice, { world: a, buckets: 2, logger: memoryLogger() }).init();
    await createEngine(bob, { world: b, buckets: 2, logger: memoryLogger() }).init();
    for (const path of worldSideNodes(b)) expect((await bob.getAcl(path)).acl).toEqual(BOB);
    for (const path of worldSideNodes(a)) expect((await alice.getAcl(path)).acl).toEqual(ALICE);
    // Nobody may change a shared node, its first creator included.
    for (const c of [alice, bob])
      await expect(c.setAcl(sharedParents()[0]!, ALICE)).rejects.toMatchObject({ code: 'NO_AUTH' });
  });

  it('a shared area node someone made first with their own ACL: init names it and the fix', async () => {
    const mallory = await as(backend, 'mallory');
    // Readable by anyone, so the refusal can say whose it is.
    await mallory.create('/zoott_leaders', undefined, { acl: [...MALLORY, READABLE] });
    const alice = await as(backend, 'alice');
    const world = worldName();
    const err = await initError(alice, world);
    expect(err.code).toBe('NO_AUTH');
    expect(err.message).toContain('/zoott_leaders, shared by every world of the namespace');
    expect(err.message).toMatch(/digest:mallory:… cdrwa/);
    // Whoever reads only the message (a worker's log) gets the command too.
    expect(err.message).toContain(
      '; an administrator must run: setAcl /zoott_leaders world:anyone:cr',
    );
    expect(err.fix).toMatchObject({ path: '/zoott_leaders', acl: [...SHARED_ACL] });
    // Read without ADMIN, ZooKeeper shows a digest without its hash.
    expect(err.fix.admins.map((a) => a.id)).toEqual(['mallory:x']);
    expect(adminCommand(err.fix, '/myapp')).toMatch(
      /^setAcl \/myapp\/zoott_leaders world:anyone:cr {3}\(zkCli\.sh, as digest:mallory:… \(ADMIN on it\) or a ZooKeeper super user\)$/,
    );
    // No half-made world is left: no worker opens it.
    expect(await alice.exists(worldRoot(world))).toBeNull();
    // Once an admin gives it the shared ACL, the same init goes through.
    await mallory.setAcl('/zoott_leaders', SHARED_ACL);
    await createEngine(alice, { world, buckets: 2, logger: memoryLogger() }).init();
    expect((await alice.getAcl(`/zoott_leaders/${world}`)).acl).toEqual(ALICE);
  });

  it("a world's own node someone made first: init names it, its ACL and who can fix it", async () => {
    const world = worldName();
    const alice = await as(backend, 'alice');
    await createEngine(alice, { world: worldName(), buckets: 2, logger: memoryLogger() }).init();
    const mallory = await as(backend, 'mallory');
    await mallory.create(`/zoott_schedules/${world}`);
    const err = await initError(alice, world);
    expect(err.message).toContain(
      `/zoott_schedules/${world} exists with an ACL these credentials may not read, which does not serve world ${world} (digest:alice:… lacks cdrwa)`,
    );
    expect(err.fix).toMatchObject({
      path: `/zoott_schedules/${world}`,
      acl: ALICE,
      recursive: true,
    });
    expect(adminCommand(err.fix)).toMatch(
      new RegExp(
        `^setAcl -R /zoott_schedules/${world} digest:alice:[^ ]+:cdrwa {3}\\(zkCli\\.sh, as a ZooKeeper super user`,
      ),
    );
    expect(await alice.exists(worldRoot(world))).toBeNull();
  });

  it('the namespace root refuses creates: init names it', async () => {
    const mallory = await as(backend, 'mallory');
    await mallory.setAcl('/', [...MALLORY, { scheme: 'world', id: 'anyone', perms: 1 }]);
    try {
      const err = await initError(await as(backend, 'alice'), worldName());
      expect(err.message).toMatch(
        /^NO_AUTH: the namespace root \(the connect string's chroot\) has/,
      );
      expect(err.fix.path).toBe('/');
      expect(err.fix.acl).toContainEqual({ scheme: 'world', id: 'anyone', perms: 5 });
    } finally {
      await mallory.setAcl('/', OPEN_ACL);
    }
  });

  it("shared nodes zoott 0.1.0 made with a locked world's ACL: another principal is refused until their owner's init opens them", async () => {
    const alice = await as(backend, 'alice');
    // What 0.1.0's `init --auth` made: the area nodes with the first initialiser's ACL.
    for (const path of [
      '/zoott_p',
      '/zoott_w',
      '/zoott_c',
      '/zoott_f',
      '/zoott_workers',
      '/zoott_g',
    ])
      await alice.create(path);
    const bob = await as(backend, 'bob');
    const refused = await initError(bob, worldName());
    expect(refused.message).toMatch(/^NO_AUTH: \/zoott_\w+, shared by every world/);
    const report = await ensureNamespace(alice);
    expect(report.opened.map((o) => o.path)).toEqual([
      '/zoott_c',
      '/zoott_f',
      '/zoott_g',
      '/zoott_p',
      '/zoott_w',
      '/zoott_workers',
    ]);
    expect(report.opened.every((o) => JSON.stringify(o.before) === JSON.stringify(ALICE))).toBe(
      true,
    );
    const world = worldName();
    await createEngine(bob, { world, buckets: 2, logger: memoryLogger() }).init();
    expect((await bob.getAcl(`/zoott_p/${world}`)).acl).toEqual(BOB);
    expect((await ensureNamespace(alice)).opened).toEqual([]);
  });

  it('a world whose nodes exist keeps working when shared nodes are locked after them', async () => {
    // Shared nodes someone else administers: every world could make its node in them...
    const mallory = await as(backend, 'mallory');
    const everyone: Acl = { scheme: 'world', id: 'anyone', perms: Perms.ALL & ~Perms.ADMIN };
    const held = ['/zoott_leaders', '/zoott_schedules', '/zoott_limits', '/zoott_q', '/zoott_g'];
    for (const path of held) await mallory.create(path, undefined, { acl: [...MALLORY, everyone] });
    const alice = await as(backend, 'alice');
    const world = worldName();
    const engine = createEngine(alice, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    expect((await ensureNamespace(alice)).kept.map((k) => k.path)).toEqual(held.sort());
    // ... until they lock them. Nothing of the world is created again under them: init, the
    // scheduler's election, a schedule, a limit, progress and a repair go through.
    for (const path of held) await mallory.setAcl(path, MALLORY);
    await createEngine(alice, { world, buckets: 2, logger: memoryLogger() }).init();
    await addSchedule(engine, { name: 'nightly', cron: '0 2 * * *', type: 't' });
    await setRateLimit(engine, 't', '5/s');
    expect(await repairWorld(alice, world, [])).toEqual({ moved: [], notMoved: [] });
    await engine.queue({ name: 'p', type: 't' });
    const claim = await engine.claim({ types: ['t'] });
    const reporter = progressReporter(await engine.context(), claim!);
    reporter.progress(0.5);
    await reporter.flush();
    expect((await engine.progress(['p']))?.progress).toBe(0.5);
    const scheduler = runScheduler(engine, { pollMs: 50 });
    try {
      const deadline = Date.now() + 10_000;
      while (!scheduler.isLeader && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(scheduler.isLeader).toBe(true);
    } finally {
      await scheduler.stop();
    }
  });
});
