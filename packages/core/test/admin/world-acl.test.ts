import { type Acl, type Coordinator, createEngine, digestAcl, OPEN_ACL } from '@zoott/core';
import { lockDownWorld, parkedRoot, worldAclMismatches, worldTops } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from '../engine/helpers.js';

const ACL: Acl[] = [digestAcl('alice', 'pw', 'cdrwa')];

/** Every node under the world's tops (and the tops), with its ACL. */
async function everyAcl(c: Coordinator, world: string): Promise<Map<string, Acl[]>> {
  const out = new Map<string, Acl[]>();
  const visit = async (path: string): Promise<void> => {
    out.set(path, (await c.getAcl(path)).acl);
    for (const n of await c.children(path)) await visit(`${path}/${n}`);
  };
  for (const top of worldTops(world)) await visit(top);
  return out;
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code,
  );

describeOnBackends('engine: lock-down of an open world', (backend) => {
  /** An open world made by a stranger, with a task, a claim, a failed task and a worker's node. */
  async function openWorld() {
    const world = worldName();
    const stranger = await backend().connect();
    const engine = createEngine(stranger, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'a', type: 't', data: { secret: 1 } });
    await engine.queue({ name: 'b', type: 't' }, { key: ['a'] });
    await engine.queue({ name: 'c', type: 't' });
    const claim = await engine.claim({ types: ['t'] });
    expect(claim).not.toBeNull();
    // A result the AMQP bridge parked: anyone could read it, or plant one to be retried.
    await stranger.create(`${parkedRoot(world)}/result-0000000001`, new Uint8Array([123, 125]));
    const owner = await backend().connect();
    await owner.addAuth('digest', 'alice:pw');
    return { world, stranger, owner, engine };
  }

  it('an interrupted run leaves the world reported open; a rerun finishes; a third changes nothing', async () => {
    const { world, stranger, owner, engine } = await openWorld();
    const before = await worldAclMismatches(owner, world, ACL);
    expect(before.map((m) => m.path)).toContain(`/zoott_${world}`);
    expect(before.every((m) => JSON.stringify(m.acl) === JSON.stringify(OPEN_ACL))).toBe(true);

    // The process dies just before its last ACL change (every node needs one).
    const total = (await everyAcl(owner, world)).size;
    const allowed = total - 1;
    let sets = 0;
    const dying = new Proxy(owner, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== 'setAcl') return typeof v === 'function' ? v.bind(target) : v;
        return (...args: Parameters<Coordinator['setAcl']>) => {
          if (++sets > allowed) return Promise.reject(new Error('killed'));
          return target.setAcl(...args);
        };
      },
    });
    await expect(lockDownWorld(dying, world, ACL)).rejects.toThrow('killed');
    // Children go first, so the tops, which init checks, are still open.
    const half = await worldAclMismatches(owner, world, ACL);
    expect(half.map((m) => m.path)).toContain(`/zoott_${world}`);

    const rerun = await lockDownWorld(owner, world, ACL);
    expect(rerun.changed.map((c) => c.path)).toEqual([`/zoott_${world}`]);
    expect(rerun.checked).toBe(total);
    for (const [path, acl] of await everyAcl(owner, world))
      expect({ path, acl }).toEqual({ path, acl: ACL });
    expect(await worldAclMismatches(owner, world, ACL)).toEqual([]);
    expect((await lockDownWorld(owner, world, ACL)).changed).toEqual([]);

    // The stranger who made the world is now shut out, and the owner works normally.
    expect(await codeOf(stranger.children(`/zoott_${world}`))).toBe('NO_AUTH');
    expect(await codeOf(stranger.get(`/zoott_${world}/a`))).toBe('NO_AUTH');
    expect(await codeOf(engine.queue({ name: 'evil', type: 't' }))).toBe('NO_AUTH');
    expect(await codeOf(stranger.create(`/zoott_p/${world}/0000/evil`))).toBe('NO_AUTH');
    const mine = createEngine(owner, { world, logger: memoryLogger() });
    expect((await mine.task(['a']))?.data).toEqual({ secret: 1 });
  });

  it('a node created under a parent while its children were being locked is locked too', async () => {
    const { world, stranger, owner } = await openWorld();
    const bucket = `/zoott_p/${world}/0000`;
    let planted = false;
    const racing = new Proxy(owner, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== 'setAcl') return typeof v === 'function' ? v.bind(target) : v;
        return async (...args: Parameters<Coordinator['setAcl']>) => {
          if (args[0] === bucket && !planted) {
            planted = true;
            await stranger.create(`${bucket}/late`, new Uint8Array(), { acl: OPEN_ACL });
          }
          return target.setAcl(...args);
        };
      },
    });
    const report = await lockDownWorld(racing, world, ACL);
    expect(planted).toBe(true);
    expect(report.changed.map((c) => c.path)).toContain(`${bucket}/late`);
    expect((await owner.getAcl(`${bucket}/late`)).acl).toEqual(ACL);
  });
});
