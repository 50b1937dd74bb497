/**
 * The upgrade from zoott 0.1.0 on a real ZooKeeper: a locked world made the way 0.1.0 made
 * it (area nodes with its owner's ACL, replies under the shared `/zoott_r`), results waiting
 * there, then a worker of this release starts. It completes the world, opens the area nodes
 * to other principals, and moves the world's results (only those, only trusted ones, in
 * order) into the world's reply area, where `wait` finds them; what a 0.1.0 worker publishes
 * afterwards is moved by the next `init`.
 */
import { type Acl, type Coordinator, createEngine, digestAcl, OPEN_ACL } from '@zoott/core';
import { encodeJson, SHARED_ACL } from '@zoott/core/internal';
import { freshNamespace, legacyInit, legacyReplies, SELF } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  legacyFindings,
  moveLegacyReplies,
  startWorkerDaemon,
  type WorkerDaemon,
  waitForResult,
} from '../src/internal.js';

const ALICE: Acl[] = [digestAcl('alice', 'pw-up', 'cdrwa')];
const WORLD = 'up';

describe('upgrading a world made by zoott 0.1.0 [zookeeper]', { timeout: 120_000 }, () => {
  let ns: string;
  let alice: Coordinator;
  let daemon: WorkerDaemon | null = null;
  const opened: Coordinator[] = [];
  let planted = '';
  let claimed = '';

  beforeAll(async () => {
    ns = await freshNamespace(inject('zkConnect'));
    alice = await connectZk(ns, {
      auth: [{ scheme: 'digest', auth: 'alice:pw-up' }],
      defaultAcl: ALICE,
    });
    opened.push(alice);
    await legacyInit(alice, WORLD, 2);
    await legacyReplies(alice, WORLD, '_default', 'rk', [{ n: 1 }, { n: 2 }]);
    // Another world's results in the same shared exchange: not this world's to move.
    await legacyReplies(alice, 'elsewhere', '_default', 'rk-other', [{ n: 9 }]);
    // A result that does not carry the world's ACL: anyone may have written it.
    planted = await alice.create('/zoott_r/_default/rk/result-', encodeJson({ forged: 1 }), {
      sequential: true,
      acl: OPEN_ACL,
    });
    // The AMQP bridge's outbox: one result waiting, one a 0.1.0 bridge is publishing now.
    await alice.create('/zoott_r/zoott~amqp');
    await alice.create(`/zoott_r/zoott~amqp/${WORLD}`);
    await alice.create(`/zoott_r/zoott~amqp/${WORLD}~claims`);
    await alice.create(`/zoott_r/zoott~amqp/${WORLD}/result-`, encodeJson({ b: 1 }), {
      sequential: true,
    });
    claimed = await alice.create(`/zoott_r/zoott~amqp/${WORLD}/result-`, encodeJson({ b: 2 }), {
      sequential: true,
    });
    await alice.create(
      `/zoott_r/zoott~amqp/${WORLD}~claims/${claimed.slice(claimed.lastIndexOf('/') + 1)}`,
      undefined,
      { ephemeral: true },
    );
  });

  afterAll(async () => {
    await daemon?.stop();
    await Promise.allSettled(opened.map((c) => c.close()));
  });

  it('doctor reports what is to move; a worker of this release moves it as it starts', async () => {
    const before = await legacyFindings(alice, WORLD);
    expect(before.map((f) => `${f.kind} ${f.path} ${f.repair}`)).toEqual([
      'legacy /zoott_r/_default/rk migrate',
      `legacy /zoott_r/zoott~amqp/${WORLD} migrate`,
    ]);
    expect(before[0]?.detail).toMatch(/holding 3 result\(s\) of world up/);

    // Another principal is kept out of the area nodes 0.1.0 made with alice's ACL.
    const bob = await connectZk(ns, {
      auth: [{ scheme: 'digest', auth: 'bob:pw' }],
      defaultAcl: [digestAcl('bob', 'pw', 'cdrwa')],
    });
    opened.push(bob);
    await expect(createEngine(bob, { world: 'bobs' }).init()).rejects.toThrow(
      /shared by every world of the namespace/,
    );

    daemon = await startWorkerDaemon({
      connect: ns,
      auth: ['alice:pw-up'],
      world: WORLD,
      nodeId: 'up-1',
      allowExec: ['/bin/echo'],
      runAs: SELF,
      logLevel: 'silent',
    });
    // Moved in order, into the world's reply area, and read from there.
    for (const n of [1, 2]) {
      const got = await waitForResult<{ n: number }>(alice, {
        world: WORLD,
        routingkey: 'rk',
        timeoutMs: 5000,
      });
      expect(got.result).toEqual({ n });
      expect(got.path.startsWith(`/zoott_~replies/${WORLD}/_default/rk/result-`)).toBe(true);
    }
    // The forged result stayed where it was, and kept its directory.
    expect(await alice.children('/zoott_r/_default/rk')).toEqual([
      planted.slice(planted.lastIndexOf('/') + 1),
    ]);
    expect(await alice.children(`/zoott_~replies/${WORLD}/_default/rk`)).toEqual([]);
    // The bridge's outbox: the waiting result moved (to an outbox no reaper touches), the one
    // being published left to its bridge.
    const outbox = `/zoott_~replies/${WORLD}/zoott~amqp/${WORLD}`;
    const moved = await alice.children(outbox);
    expect(moved).toHaveLength(1);
    expect(
      JSON.parse(new TextDecoder().decode((await alice.get(`${outbox}/${moved[0]}`)).data)),
    ).toEqual({ b: 1 });
    expect((await alice.get(outbox)).data).toHaveLength(0);
    expect(await alice.exists(claimed)).not.toBeNull();
    // The other world's results are untouched.
    expect(await alice.children('/zoott_r/_default/rk-other')).toHaveLength(1);
    // The world got what 0.1.0 lacked, and the area nodes are shared now: bob can init.
    for (const path of ['/zoott_leaders/up/scheduler', '/zoott_q/up', '/zoott_~races/up'])
      expect((await alice.getAcl(path)).acl).toEqual(ALICE);
    expect((await alice.getAcl('/zoott_p')).acl).toEqual([...SHARED_ACL]);
    await createEngine(bob, { world: 'bobs' }).init();
  });

  it('what a 0.1.0 worker publishes meanwhile is moved by the next init', async () => {
    await legacyReplies(alice, WORLD, 'ex', 'late', [{ late: true }]);
    expect((await legacyFindings(alice, WORLD)).map((f) => f.path)).toContain('/zoott_r/ex/late');
    const report = await moveLegacyReplies(alice, WORLD);
    expect(report.moved).toHaveLength(1);
    expect(report.removed).toContain('/zoott_r/ex/late');
    expect(report.left.map((l) => l.path)).toEqual([planted, claimed]);
    const got = await waitForResult(alice, {
      world: WORLD,
      exchange: 'ex',
      routingkey: 'late',
      timeoutMs: 5000,
    });
    expect(got.result).toEqual({ late: true });
  });
});
