/**
 * ACLs on a real ZooKeeper: a world initialised by a digest user, locked to that
 * user. An unauthenticated client and a client with the wrong password try every operation
 * and get NO_AUTH; the authorised client and its workers work normally.
 */
import {
  type Claim,
  type Coordinator,
  createEngine,
  digestAcl,
  type Engine,
  OPEN_ACL,
  runWorker,
  utf8,
} from '@zoott/core';
import { SHARED_ACL, sharedParents, worldSideNodes } from '@zoott/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from './support/daemon.js';
import { codeOf, until, type ZkNamespace, zkNamespace } from './support/zk.js';

const USER = 'alice';
const PASSWORD = 'correct-horse';
const WORLD = 'locked';
const quiet = { warn: () => {} };
const locked = {
  auth: [{ scheme: 'digest', auth: `${USER}:${PASSWORD}` }],
  defaultAcl: [digestAcl(USER, PASSWORD, 'cdrwa')],
};

describe('ACL: a world locked to one digest user [zookeeper]', () => {
  let ns: ZkNamespace;
  let owner: Coordinator;
  let engine: Engine;
  let heldClaim: Claim;
  const intruders: { name: string; c: Coordinator; engine: Engine }[] = [];

  beforeAll(async () => {
    ns = await zkNamespace();
    owner = await ns.connect(locked);
    engine = createEngine(owner, { world: WORLD, buckets: 4, logger: quiet });
    await engine.init();
    await engine.queue({ name: 'secret', type: 'job', data: { token: 's3cr3t' } });
    await engine.queue({ name: 'held', type: 'job' });
    await engine.queue({ name: 'child', type: 'job' }, { key: ['secret'] });
    const claim = await engine.claim({ types: ['job'] });
    expect(claim).not.toBeNull();
    heldClaim = claim!;
    const anonymous = await ns.connect();
    const wrong = await ns.connect({ auth: [{ scheme: 'digest', auth: `${USER}:wrong` }] });
    for (const [name, c] of [
      ['unauthenticated', anonymous],
      ['wrong password', wrong],
    ] as const)
      intruders.push({ name, c, engine: createEngine(c, { world: WORLD, logger: quiet }) });
  });
  afterAll(async () => {
    engine.close();
    await ns.cleanup();
  });

  it('every node the engine created for the world carries only the owner digest ACL', async () => {
    for (const path of [
      `/zoott_${WORLD}`,
      `/zoott_${WORLD}/secret`,
      ...worldSideNodes(WORLD),
      heldClaim.workingPath,
      heldClaim.entryPath,
    ]) {
      const { acl } = await owner.getAcl(path);
      expect({ path, acl }).toEqual({ path, acl: locked.defaultAcl });
    }
    // The area nodes every world shares: anyone may make a world there, nobody may lock them.
    for (const path of sharedParents())
      expect({ path, acl: (await owner.getAcl(path)).acl }).toEqual({ path, acl: [...SHARED_ACL] });
  });

  for (const who of ['unauthenticated', 'wrong password']) {
    describe(who, () => {
      const intruder = () => intruders.find((i) => i.name === who)!;

      it('cannot read task data (tree node, task record, pending entry)', async () => {
        const { c, engine: e } = intruder();
        expect(await codeOf(c.get(`/zoott_${WORLD}/secret`))).toBe('NO_AUTH');
        expect(await codeOf(c.children(`/zoott_${WORLD}`))).toBe('NO_AUTH');
        expect(await codeOf(c.get(heldClaim.entryPath))).toBe('NO_AUTH');
        expect(await codeOf(e.task(['secret']))).toBe('NO_AUTH');
        expect(await codeOf(e.list())).toBe('NO_AUTH');
      });

      it('cannot queue, at the top or under a task', async () => {
        const { engine: e } = intruder();
        expect(await codeOf(e.queue({ name: 'evil', type: 'job' }))).toBe('NO_AUTH');
        expect(await codeOf(e.queue({ name: 'evil', type: 'job' }, { key: ['secret'] }))).toBe(
          'NO_AUTH',
        );
        expect(await codeOf(e.queue({ name: 'evil', type: 'job' }, { name: '.*' }))).toBe(
          'NO_AUTH',
        );
      });

      it('cannot claim', async () => {
        expect(await codeOf(intruder().engine.claim({ types: ['job'] }))).toBe('NO_AUTH');
      });

      it('cannot complete or fail a claim it stole', async () => {
        const { c, engine: e } = intruder();
        // A forged claim in the intruder's own session, so only the server can refuse it.
        const forged: Claim = { ...heldClaim, session: c.sessionId! };
        expect(await codeOf(e.complete(forged, { owned: true }))).toBe('NO_AUTH');
        expect(await codeOf(e.fail(forged, new Error('x')))).toBe('NO_AUTH');
        expect(
          await codeOf(
            c.multi([
              {
                op: 'create',
                path: heldClaim.workingPath.replace('/zoott_w/', '/zoott_c/'),
                data: utf8.encode('{}'),
              },
            ]),
          ),
        ).toBe('NO_AUTH');
      });

      it('cannot delete: cancel, retry, raw deletes', async () => {
        const { c, engine: e } = intruder();
        expect(await codeOf(e.cancel(['secret'], { subtree: true }))).toBe('NO_AUTH');
        expect(await codeOf(e.retry(['secret']))).toBe('NO_AUTH');
        expect(await codeOf(c.delete(`/zoott_${WORLD}/secret/child`))).toBe('NO_AUTH');
        expect(await codeOf(c.delete(heldClaim.workingPath))).toBe('NO_AUTH');
        expect(await codeOf(c.delete(heldClaim.entryPath))).toBe('NO_AUTH');
      });

      it('cannot change ACLs', async () => {
        const { c } = intruder();
        for (const path of [`/zoott_${WORLD}`, `/zoott_${WORLD}/secret`, `/zoott_p/${WORLD}`])
          expect(await codeOf(c.setAcl(path, OPEN_ACL))).toBe('NO_AUTH');
      });

      it('cannot overwrite data or the world meta', async () => {
        const { c } = intruder();
        expect(await codeOf(c.set(`/zoott_${WORLD}`, utf8.encode('{}')))).toBe('NO_AUTH');
        expect(await codeOf(c.set(`/zoott_${WORLD}/secret`, utf8.encode('{}')))).toBe('NO_AUTH');
      });
    });
  }

  it('the owner and its workers work normally, and nothing the intruders tried changed', async () => {
    expect(await engine.counts()).toEqual({ pending: 2, working: 1, completed: 0, failed: 0 });
    expect(await engine.complete(heldClaim, { ok: 1 })).toEqual({ status: 'completed' });
    const workerSession = await ns.connect(locked);
    const worker = runWorker(
      workerSession,
      { job: (t) => ({ ran: t.name }) },
      {
        world: WORLD,
        logger: quiet,
      },
    );
    try {
      await until(
        'the worker completes the rest',
        async () => (await engine.counts()).completed === 3,
      );
    } finally {
      await worker.stop();
    }
    expect((await engine.task(['secret', 'child']))?.result).toEqual({ ran: 'child' });
    // Records the worker wrote are locked too.
    const record = heldClaim.workingPath.replace('/zoott_w/', '/zoott_c/');
    const { acl } = await owner.getAcl(record);
    expect(acl).toEqual(locked.defaultAcl);
    const anonymous = intruders[0]!.c;
    expect(await codeOf(anonymous.get(record))).toBe('NO_AUTH');
  });
});

describe('ACL: a worker daemon in a locked world [zookeeper + worker daemon]', () => {
  it('locks the records it writes to its own credentials (--auth, default --acl auth)', async () => {
    const ns = await zkNamespace();
    const auth = [{ scheme: 'digest', auth: 'alice:pw' }];
    const defaultAcl = [digestAcl('alice', 'pw', 'cdrwa')];
    const owner = await ns.connect({ auth, defaultAcl });
    const engine = createEngine(owner, { world: 'locked', buckets: 1, logger: quiet });
    await engine.init();
    await engine.queue({ name: 'secret', type: 'echo', data: { token: 's3cr3t' } });
    const { daemon } = await startDaemon({
      connect: ns.connectString,
      auth: ['digest:alice:pw'],
      world: 'locked',
      nodeId: 'acl-worker',
      handlers: { echo: (t) => ({ echoed: t.data }) },
    });
    try {
      await until(
        'secret completes',
        async () => (await engine.task(['secret']))?.state === 'completed',
      );
      const record = '/zoott_c/locked/0000/secret';
      const { acl } = await owner.getAcl(record);
      const anonymous = await ns.connect();
      expect({ acl, anonymousRead: await codeOf(anonymous.get(record)) }).toEqual({
        acl: defaultAcl,
        anonymousRead: 'NO_AUTH',
      });
      expect(acl).not.toEqual(OPEN_ACL);
    } finally {
      await daemon.stop();
      engine.close();
      await ns.cleanup();
    }
  }, 60_000);
});
