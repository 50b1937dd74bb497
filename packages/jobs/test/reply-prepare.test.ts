/**
 * What a publisher reads before each result: the world's ACL and its reply path's, in one
 * round trip when the directory exists, and a refusal (with nothing written) when the path
 * does not carry the world's ACL. On both adapters.
 */
import { type Coordinator, createEngine, digestAcl, OPEN_ACL } from '@zoott/core';
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

describeOnBackends('publishing a reply: the reply path check', (backend) => {
  it('reads the three ACLs together: one round trip when the directory exists', async () => {
    const c = await backend().connect();
    await createEngine(c, { world: WORLD }).init();
    await publishResult(c, { exchange: 'x', routingkey: 'k' }, { n: 1 }, { world: WORLD });
    const gate = gatedReads(c);
    const prepared = prepareReply(gate.client, { exchange: 'x', routingkey: 'k' }, WORLD);
    expect(await gate.waiting()).toEqual(
      [`getAcl /zoott_${WORLD}`, 'getAcl /zoott_r/x', 'getAcl /zoott_r/x/k'].sort(),
    );
    gate.release();
    expect(await prepared).toEqual({ dir: '/zoott_r/x/k', acl: OPEN_ACL });
    expect(await gate.waiting()).toEqual([]);
  });

  it('refuses an existing path without the world ACL, naming the node, and writes nothing', async () => {
    const owner = await backend().connect();
    await owner.addAuth('digest', 'alice:pw');
    const locked = [digestAcl('alice', 'pw', 'cdrwa')];
    await createEngine(owner, { world: WORLD }).init();
    // The world's ACL is the one its root carries.
    await owner.setAcl(`/zoott_${WORLD}`, locked);
    const other = await backend().connect();
    await other.create('/zoott_r');
    await other.create('/zoott_r/open', undefined, { acl: OPEN_ACL });
    await other.create('/zoott_r/open/k', undefined, { acl: locked });
    // A locked exchange over an open directory (made open, or opened since, by the owner).
    await owner.create('/zoott_r/x', undefined, { acl: locked });
    await owner.create('/zoott_r/x/k', undefined, { acl: OPEN_ACL });
    for (const [exchange, at] of [
      ['open', '/zoott_r/open'],
      ['x', '/zoott_r/x/k'],
    ] as const) {
      const refused = prepareReply(owner, { exchange, routingkey: 'k' }, WORLD);
      await expect(refused).rejects.toMatchObject({
        code: 'NO_AUTH',
        path: at,
        message: expect.stringContaining(`${at} has ACL [world:anyone:cdrwa], not the world's`),
      });
      await expect(
        publishResult(owner, { exchange, routingkey: 'k' }, { n: 1 }, { world: WORLD }),
      ).rejects.toMatchObject({ code: 'NO_AUTH', path: at });
    }
    expect(await owner.children('/zoott_r/open/k')).toEqual([]);
    expect(await other.children('/zoott_r/x/k')).toEqual([]);
  });

  it('creates a missing directory with the world ACL, then checks it', async () => {
    const c = await backend().connect();
    await createEngine(c, { world: WORLD }).init();
    const { dir, acl } = await prepareReply(c, { exchange: 'new', routingkey: 'k' }, WORLD);
    expect(dir).toBe('/zoott_r/new/k');
    expect((await c.getAcl(dir)).acl).toEqual(acl);
    await expect(prepareReply(c, { routingkey: 'k' }, 'missing')).rejects.toMatchObject({
      code: 'NO_SUCH_TASK',
    });
  });
});
