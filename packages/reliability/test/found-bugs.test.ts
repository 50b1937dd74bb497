/**
 * Bugs found by the reliability work (issue #8). Each test states what should happen and
 * FAILS on the current code; the lead routes each to its owner. Do not "fix" a test here:
 * fix the code, then move the test next to the others.
 */
import { createEngine, digestAcl, OPEN_ACL, runWorker } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import { startProxy } from '@zoott/zk-testkit';
import { describe, expect, it } from 'vitest';
import { loopErrors, startDaemon } from './support/daemon.js';
import { codeOf, until, zkNamespace } from './support/zk.js';
import { zkCliCreate } from './support/zkcli.js';

const quiet = { warn: () => {} };

describe('found bugs [zookeeper]', () => {
  it('core claimer: a garbage entry-shaped node in a pending bucket must not stop the worker', async () => {
    const ns = await zkNamespace();
    const producer = await ns.connect();
    const engine = createEngine(producer, { world: 'junk', buckets: 1, logger: quiet });
    await engine.init();
    // Another client writes a node whose NAME looks like an entry but whose data is not JSON.
    await zkCliCreate(
      ns.server,
      `${ns.chroot}/zoott_p/junk/0000/q1000000-junk-0000000001`,
      'not-json{',
    );
    await engine.queue({ name: 'good', type: 'echo' });
    const { daemon, lines } = await startDaemon({
      connect: ns.connectString,
      world: 'junk',
      nodeId: 'junk-worker',
      handlers: { echo: () => 'ok' },
    });
    try {
      // Expected: the good task completes; the garbage is moved to the failed area with the
      // reason (or skipped), and the worker does not spin on it.
      await until(
        'the good task completes',
        async () => (await engine.task(['good']))?.state === 'completed',
        15_000,
      ).catch(() => undefined);
      expect({
        good: (await engine.task(['good']))?.state,
        loopErrors: loopErrors(lines).length,
      }).toEqual({ good: 'completed', loopErrors: 0 });
    } finally {
      await daemon.stop();
      engine.close();
      await ns.cleanup();
    }
  }, 60_000);

  it('worker daemon: in a world locked by ACL, the records a daemon writes must not be world-open', async () => {
    const ns = await zkNamespace();
    const auth = [{ scheme: 'digest', auth: 'alice:pw' }];
    const defaultAcl = [digestAcl('alice', 'pw', 'cdrwa')];
    const owner = await ns.connect({ auth, defaultAcl });
    const engine = createEngine(owner, { world: 'locked', buckets: 1, logger: quiet });
    await engine.init();
    await engine.queue({ name: 'secret', type: 'echo', data: { token: 's3cr3t' } });
    // The daemon takes --auth but has no setting for the ACL of the nodes it creates
    // (working claims, completed and failed records, retry entries): connectZk gets no
    // defaultAcl, so they are OPEN_ACL_UNSAFE.
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

  it('core worker: after a partition longer than session + connect timeout, the healed worker must serve again', async () => {
    const ns = await zkNamespace();
    const producer = await ns.connect();
    const engine = createEngine(producer, { world: 'heal', buckets: 1, logger: quiet });
    await engine.init();
    const proxy = await startProxy(ns.server);
    const sessionTimeoutMs = 2000;
    const cut = await connectZk(`${proxy.hostPort}${ns.chroot}`, { sessionTimeoutMs });
    const worker = runWorker(
      cut,
      { echo: () => 'ok' },
      { world: 'heal', logger: quiet, pollMs: 200 },
    );
    try {
      await engine.queue({ name: 'before', type: 'echo' });
      await until(
        'before completes',
        async () => (await engine.task(['before']))?.state === 'completed',
      );
      proxy.setPartitioned(true);
      // The session expires on the server; the client sees `lost`, and the worker's one
      // renewSession() fails too, because the network is still down when it tries.
      await until('the client sees lost', () => cut.state === 'lost', 20_000);
      await new Promise((r) => setTimeout(r, 3 * sessionTimeoutMs));
      proxy.setPartitioned(false);
      await engine.queue({ name: 'after', type: 'echo' });
      // Expected: the worker renews its session once the network is back and runs `after`.
      await until(
        'after completes',
        async () => (await engine.task(['after']))?.state === 'completed',
        20_000,
      ).catch(() => undefined);
      expect({ state: cut.state, after: (await engine.task(['after']))?.state }).toEqual({
        state: 'connected',
        after: 'completed',
      });
    } finally {
      await worker.stop();
      await cut.close();
      await proxy.close();
      engine.close();
      await ns.cleanup();
    }
  }, 90_000);

  it('zk-adapter: an over-long path must be refused up front, not by dropping the connection', async () => {
    const ns = await zkNamespace();
    const c = await ns.connect();
    const events: string[] = [];
    c.onSession((e) => events.push(e.type));
    try {
      // ZooKeeper closes the connection on a packet over jute.maxbuffer, so a 2 MB path costs
      // the session its connection (every request in flight fails CONNECTION_LOSS) and the
      // caller learns only "outcome unknown". maxDataBytes guards data, not the path.
      const code = await codeOf(c.create(`/${'p'.repeat(2_000_000)}`));
      const refusedUpFront = code === 'BAD_ARGUMENTS' || code === 'INVALID_PATH';
      expect({ refusedUpFront, code, events }).toEqual({ refusedUpFront: true, code, events: [] });
    } finally {
      await ns.cleanup();
    }
  }, 60_000);
});
