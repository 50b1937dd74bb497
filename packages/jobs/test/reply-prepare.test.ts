/**
 * What a publisher reads before each result: the world's ACL and its reply directory's, in
 * one round trip when the directory exists, and a refusal (with nothing written) when the
 * directory does not carry the world's ACL: that routing key only, whatever the exchange
 * node above it carries. On both adapters.
 */
import { type Coordinator, createEngine, digestAcl, OPEN_ACL, Perms } from '@zoott/core';
import { adminCommand, NamespaceError } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { prepareReply, publishResult } from '../src/internal.js';

const WORLD = 'rp';

/** Holds every read of `inner` until `release()`: what is pending shows which reads overlap. */
function gatedReads(inner: Coordinator) {
  const pending: Array<{ call: string; go: () => void }> = [];
  const gated = new Set(['get', 'getAcl', 'exists', 'children', 'childrenWithStat']);
  const client = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof prop !== 'string' || !gated.has(prop) || typeof value !== 'function')
        return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        await new Promise<void>((go) => pending.push({ call: `${prop} ${String(args[0])}`, go }));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  /** The reads waiting now, once every read that can be sent without a reply has been. */
  const waiting = async () => {
    await new Promise((r) => setImmediate(r));
    return pending.map((p) => p.call).sort();
  };
  const release = () => {
    for (const p of pending.splice(0)) p.go();
  };
  return { client, waiting, release };
}

const ROOT = `/zoott_~replies/${WORLD}`;

describeOnBackends('publishing a reply: the reply path check', (backend) => {
  it('reads the two ACLs together: one round trip when the directory exists', async () => {
    const c = await backend().connect();
    await createEngine(c, { world: WORLD }).init();
    await publishResult(c, { exchange: 'x', routingkey: 'k' }, { n: 1 }, { world: WORLD });
    const gate = gatedReads(c);
    const prepared = prepareReply(gate.client, { exchange: 'x', routingkey: 'k' }, WORLD);
    expect(await gate.waiting()).toEqual([`getAcl /zoott_${WORLD}`, `getAcl ${ROOT}/x/k`].sort());
    gate.release();
    expect(await prepared).toEqual({ dir: `${ROOT}/x/k`, acl: OPEN_ACL });
    expect(await gate.waiting()).toEqual([]);
  });

  it('refuses a directory without the world ACL, naming it, and writes nothing; an open exchange refuses no routing key by itself', async () => {
    const owner = await backend().connect();
    await owner.addAuth('digest', 'alice:pw');
    const locked = [digestAcl('alice', 'pw', 'cdrwa')];
    await createEngine(owner, { world: WORLD }).init();
    // The world's ACL is the one its root carries; its node in the reply area has it too.
    await owner.setAcl(`/zoott_${WORLD}`, locked);
    await owner.setAcl(ROOT, locked);
    // An exchange the owner made open (before locking the world down, say): anyone may make
    // a routing key there, and someone did, open.
    await owner.create(`${ROOT}/open`, undefined, { acl: OPEN_ACL });
    await owner.create(`${ROOT}/open/mine`, undefined, { acl: locked });
    const other = await backend().connect();
    await other.create(`${ROOT}/open/theirs`, undefined, { acl: OPEN_ACL });
    const refused = prepareReply(owner, { exchange: 'open', routingkey: 'theirs' }, WORLD);
    await expect(refused).rejects.toMatchObject({
      code: 'NO_AUTH',
      path: `${ROOT}/open/theirs`,
      message: expect.stringContaining(
        `${ROOT}/open/theirs has ACL [world:anyone:cdrwa], not the world's`,
      ),
    });
    await expect(
      publishResult(owner, { exchange: 'open', routingkey: 'theirs' }, { n: 1 }, { world: WORLD }),
    ).rejects.toMatchObject({ code: 'NO_AUTH', path: `${ROOT}/open/theirs` });
    expect(await owner.children(`${ROOT}/open/theirs`)).toEqual([]);
    // The other routing keys of that exchange: one that exists locked, one made now.
    for (const routingkey of ['mine', 'new']) {
      const path = await publishResult(
        owner,
        { exchange: 'open', routingkey },
        { n: 1 },
        { world: WORLD },
      );
      expect(path.startsWith(`${ROOT}/open/${routingkey}/result-`)).toBe(true);
      expect((await owner.getAcl(path)).acl).toEqual(locked);
    }
    expect((await owner.getAcl(`${ROOT}/open/new`)).acl).toEqual(locked);
  });

  it('creates a missing directory with the world ACL, then checks it', async () => {
    const c = await backend().connect();
    await createEngine(c, { world: WORLD }).init();
    const { dir, acl } = await prepareReply(c, { exchange: 'new', routingkey: 'k' }, WORLD);
    expect(dir).toBe(`${ROOT}/new/k`);
    expect((await c.getAcl(dir)).acl).toEqual(acl);
    await expect(prepareReply(c, { routingkey: 'k' }, 'missing')).rejects.toMatchObject({
      code: 'NO_SUCH_TASK',
    });
  });

  it("the world's node of the reply area held by someone else: the refusal names it and what its admins must run", async () => {
    const c = await backend().connect();
    await createEngine(c, { world: WORLD }).init();
    const mallory = await backend().connect({
      auth: 'mallory:pw-m',
      defaultAcl: [digestAcl('mallory', 'pw-m', 'cdrwa')],
    });
    // An open world lets anyone change its nodes' ACLs.
    await mallory.setAcl(ROOT, [
      digestAcl('mallory', 'pw-m', 'cdrwa'),
      { scheme: 'world', id: 'anyone', perms: Perms.READ },
    ]);
    const refused = await publishResult(c, { routingkey: 'k' }, { n: 1 }, { world: WORLD }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(NamespaceError);
    const err = refused as NamespaceError;
    expect(err.reason).toMatch(
      new RegExp(
        `^${ROOT} has digest:mallory:… cdrwa, world:anyone r, which does not let these credentials create ${ROOT}/_default in it$`,
      ),
    );
    expect(adminCommand(err.fix)).toBe(
      `setAcl -R ${ROOT} world:anyone:cdrwa   (zkCli.sh, as digest:mallory:… (ADMIN on it) or a ZooKeeper super user)`,
    );
  });
});
