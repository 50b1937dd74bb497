import type { SessionEvent, WatchEvent } from '@zoott/core';
import {
  RESTART_BOUND_MS,
  startProxy,
  startZooKeeper,
  type ZooKeeperServer,
} from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killSession, unprotectedName } from '../src/index.js';
import { bytes, freshNamespace, nextSessionEvent, open, text, zkServer } from './helpers.js';

describe('sessions on a real ZooKeeper', () => {
  it('loses the session when the server expires it, then renews on request', async () => {
    const ns = await freshNamespace();
    const zk = await open(ns, { sessionTimeoutMs: 4000 });
    const watcher = await open(ns);
    await zk.create('/claim', undefined, { ephemeral: true });
    const events: SessionEvent[] = [];
    zk.onSession((e) => events.push(e));
    const oldId = zk.sessionId;

    await killSession(zk);
    expect(zk.state).toBe('lost');
    // The server drops the connection first ('suspended'; killSession may need a second try,
    // and the client may briefly get its session back); it always ends in 'lost'.
    expect(events[0]?.type).toBe('suspended');
    expect(events.at(-1)).toEqual({ type: 'lost', sessionId: null });
    await expect(zk.get('/claim')).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
    expect(await watcher.exists('/claim')).toBeNull();

    await zk.renewSession();
    expect(zk.state).toBe('connected');
    expect(zk.sessionId).not.toBe(oldId);
    expect(events.at(-1)).toEqual({ type: 'connected', sessionId: zk.sessionId });
    await zk.create('/claim', undefined, { ephemeral: true });
  });

  it('calls the session lost on its own when partitioned for the whole session timeout', async () => {
    const ns = await freshNamespace();
    const proxy = await startProxy(zkServer());
    try {
      const chroot = ns.slice(ns.indexOf('/'));
      const zk = await open(`${proxy.hostPort}${chroot}`, { sessionTimeoutMs: 2000 });
      const types: string[] = [];
      zk.onSession((e) => types.push(e.type));
      const pending = zk.get('/nothing-here').catch((e: unknown) => e);
      proxy.setPartitioned(true);
      await nextSessionEvent(zk, 'lost');
      expect(types).toEqual(['suspended', 'lost']);
      proxy.setPartitioned(false);
      // A request caught in the partition fails instead of hanging.
      expect(await pending).toMatchObject({ op: 'get' });
      await zk.renewSession();
      expect(zk.state).toBe('connected');
    } finally {
      await proxy.close();
    }
  });

  it('keeps the session through a dropped connection, and watches set before it still fire', async () => {
    const ns = await freshNamespace();
    const proxy = await startProxy(zkServer());
    try {
      const chroot = ns.slice(ns.indexOf('/'));
      const zk = await open(`${proxy.hostPort}${chroot}`);
      const other = await open(ns);
      await zk.create('/node', bytes('v1'));
      const fired = new Promise<WatchEvent>((resolve) => {
        void zk.get('/node', { watch: resolve });
      });
      await zk.exists('/node');
      const id = zk.sessionId;
      const types: string[] = [];
      zk.onSession((e) => types.push(e.type));
      proxy.dropConnections();
      await nextSessionEvent(zk, 'reconnected');
      expect(zk.sessionId).toBe(id);
      await other.set('/node', bytes('v2'));
      expect(await fired).toEqual({ type: 'dataChanged', path: '/node' });
      expect(types).toEqual(['suspended', 'reconnected']);
    } finally {
      await proxy.close();
    }
  });

  it('leaves exactly one node when the reply to a sequential create is lost', async () => {
    const ns = await freshNamespace();
    const proxy = await startProxy(zkServer());
    try {
      const chroot = ns.slice(ns.indexOf('/'));
      const zk = await open(`${proxy.hostPort}${chroot}`);
      await zk.create('/q');
      const lost = proxy.loseNextReply();
      const path = await zk.create('/q/job-', bytes('payload'), {
        sequential: true,
        ephemeral: true,
      });
      await lost; // the server applied the create; its reply never arrived
      const children = await zk.children('/q');
      expect(children).toHaveLength(1);
      expect(`/q/${children[0]}`).toBe(path);
      expect(unprotectedName(children[0]!)).toMatch(/^job-\d{10}$/);
      expect(text((await zk.get(path)).data)).toBe('payload');
    } finally {
      await proxy.close();
    }
  });

  it('gives up a handshake the server never answers, and reconnects within the session', async () => {
    const ns = await freshNamespace();
    const proxy = await startProxy(zkServer());
    try {
      const chroot = ns.slice(ns.indexOf('/'));
      const zk = await open(`${proxy.hostPort}${chroot}`, { sessionTimeoutMs: 6000 });
      const id = zk.sessionId;
      const types: string[] = [];
      zk.onSession((e) => types.push(e.type));
      const settled = Promise.race([
        nextSessionEvent(zk, 'reconnected'),
        nextSessionEvent(zk, 'lost'),
      ]);
      // The reconnect lands on a connection that is accepted and never answered, as on a
      // server that is still starting; the one after it works.
      const held = proxy.holdNextConnection();
      proxy.dropConnections();
      await settled;
      expect(types).toEqual(['suspended', 'reconnected']);
      expect(zk.sessionId).toBe(id);
      // The first handshake after a connection is given half a second, not the whole bound
      // (2 s here): a starting server answers the next connection at once. (A timer fires
      // late on a busy machine, never early: the bound is what it must stay under.)
      expect(await held).toBeLessThan(1900);
    } finally {
      await proxy.close();
    }
  });

  it('gives each handshake held in a row twice the time of the one before, up to its bound', async () => {
    const ns = await freshNamespace();
    const proxy = await startProxy(zkServer());
    try {
      const chroot = ns.slice(ns.indexOf('/'));
      // A long session: the bound of one handshake is a third of it, 4 s.
      const zk = await open(`${proxy.hostPort}${chroot}`, { sessionTimeoutMs: 12_000 });
      const id = zk.sessionId;
      const reconnected = nextSessionEvent(zk, 'reconnected');
      // A server that is slow to answer, not one that is starting: it still gets the time.
      const held = proxy.holdNextConnections(4);
      proxy.dropConnections();
      const [a, b, c, d] = await held;
      await reconnected;
      expect(zk.sessionId).toBe(id);
      // Timers fire late on a busy machine, never early: each wait is at least its bound.
      expect(a).toBeLessThan(1900);
      expect(b).toBeGreaterThan(900);
      expect(c).toBeGreaterThan(1800);
      expect(d).toBeGreaterThan(3600);
    } finally {
      await proxy.close();
    }
  });

  it('keeps a connection that is answering past its read timeout: the timeout counts silence', async () => {
    const ns = await freshNamespace();
    // The read timeout is 2/3 of the session timeout: about 1.3 s here.
    const zk = await open(ns, { sessionTimeoutMs: 2000 });
    const types: string[] = [];
    zk.onSession((e) => types.push(e.type));
    // Three read timeouts of steady traffic, answered all along: what the property is about
    // is a span of time, so the loop runs for one (no sleep: every turn waits on a reply).
    const end = Date.now() + 4000;
    let replies = 0;
    while (Date.now() < end) {
      await zk.exists('/');
      replies++;
    }
    expect(replies).toBeGreaterThan(10);
    expect(types).toEqual([]);
    expect(zk.state).toBe('connected');
  });
  it('sends credentials before requests queued while disconnected', async () => {
    const ns = await freshNamespace();
    const proxy = await startProxy(zkServer());
    try {
      const chroot = ns.slice(ns.indexOf('/'));
      const zk = await open(`${proxy.hostPort}${chroot}`);
      await zk.addAuth('digest', 'bob:pw');
      await zk.create('/locked', bytes('x'), {
        acl: [{ scheme: 'auth', id: '', perms: 31 }],
      });
      proxy.setPartitioned(true);
      proxy.dropConnections();
      await nextSessionEvent(zk, 'suspended');
      const read = zk.get('/locked'); // queued while disconnected
      proxy.setPartitioned(false);
      expect(text((await read).data)).toBe('x');
    } finally {
      await proxy.close();
    }
  });
});

describe('a server restart', () => {
  let server: ZooKeeperServer;
  beforeAll(async () => {
    // tick 2 s: sessions may last 4 s (the second test) up to 240 s (the first).
    server = await startZooKeeper({ own: true, tickTimeMs: 2000 });
  });
  afterAll(async () => {
    await server?.stop();
  });

  // The session has to outlast the restart, which on a loaded machine (the JVM start competes
  // with the rest of the suite) takes what it takes. stop() and start() are each bounded by
  // the testkit, start() by the server's own readiness (`ruok`, then a mode from `srvr`), so a
  // session longer than both bounds plus the client's reconnect survives every restart that
  // succeeds; one that does not succeed fails start() with the server's log, not this test.
  const RECONNECT_ALLOWANCE_MS = 30_000;
  const SESSION_MS = RESTART_BOUND_MS + RECONNECT_ALLOWANCE_MS;

  it('suspends the client, which carries on with the same session after the restart', {
    timeout: SESSION_MS + 60_000,
  }, async () => {
    const zk = await open(server.connectString, { sessionTimeoutMs: SESSION_MS });
    expect(zk.sessionTimeoutMs, 'the server granted the whole session timeout').toBe(SESSION_MS);
    await zk.create('/kept', bytes('before'));
    await zk.create('/mine', undefined, { ephemeral: true });
    const id = zk.sessionId;
    const suspended = nextSessionEvent(zk, 'suspended');
    await server.stop();
    await suspended;
    expect(zk.state).toBe('suspended');
    const read = zk.get('/kept'); // retried until the server is back
    await server.start();
    expect(text((await read).data)).toBe('before');
    expect(zk.state).toBe('connected');
    expect(zk.sessionId).toBe(id);
    expect((await zk.exists('/mine'))?.ephemeralOwner).toBe(id);
  });

  it('loses the session when the server stays down past the session timeout', async () => {
    const zk = await open(server.connectString, { sessionTimeoutMs: 2000 });
    const lost = nextSessionEvent(zk, 'lost');
    await server.stop({ signal: 'SIGKILL' });
    try {
      await lost;
      expect(zk.state).toBe('lost');
    } finally {
      await server.start();
    }
    await zk.renewSession();
    expect(zk.state).toBe('connected');
  });
});
