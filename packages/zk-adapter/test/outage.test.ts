import { isZoottError } from '@zoott/core';
import { startProxy, startZooKeeper, type ZooKeeperServer } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZkCoordinator } from '../src/index.js';
import { bytes, nextSessionEvent, open } from './helpers.js';

/**
 * An outage longer than the session timeout, on a server of its own that the tests stop and
 * start: what the client does while its session is lost and being renewed, and how soon it
 * works again. Deadlines are set far out (10 minutes), so a call left to its deadline shows as
 * a test that hangs, not as a slow one.
 */
const FAR = 600_000;

/** The error a promise rejects with, or `resolved` when it does not. */
async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err;
  }
}

/** Resolves once `check()` holds, polling; fails after `ms`. */
async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Renews like a worker does: from the `lost` event, again and again until a session opens. */
function renewLikeAWorker(zk: ZkCoordinator): () => void {
  let stopped = false;
  const renew = async () => {
    while (!stopped && zk.state === 'lost') await zk.renewSession().catch(() => undefined);
  };
  const off = zk.onSession((e) => {
    if (e.type === 'lost') void renew();
  });
  return () => {
    stopped = true;
    off();
  };
}

describe('an outage longer than the session', () => {
  let server: ZooKeeperServer;
  beforeAll(async () => {
    server = await startZooKeeper({ own: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a call issued during a renewal that cannot connect fails SESSION_EXPIRED when the renewal gives up, not at its deadline', async () => {
    const zk = await open(server.connectString, {
      sessionTimeoutMs: 2000,
      connectTimeoutMs: 2000,
      requestTimeoutMs: FAR,
    });
    // An idle session hears the answers to its keep-alive pings: lastReplyAt moves on.
    const idleSince = Date.now();
    await until(() => (zk.lastReplyAt ?? 0) > idleSince + 1000, 'a ping answered');
    const lost = nextSessionEvent(zk, 'lost');
    await server.stop();
    const stoppedAt = Date.now();
    try {
      await lost;
      const renewal = failure(zk.renewSession());
      const call = failure(zk.exists('/'));
      expect(await renewal).toMatchObject({ code: 'CONNECTION_LOSS' });
      const err = await call;
      expect(err).toMatchObject({ code: 'SESSION_EXPIRED', op: 'exists' });
      expect(String((err as Error).message)).toMatch(/renew/);
      // Nothing was heard during the outage, and the time says so without asking anyone.
      expect(zk.lastReplyAt).toBeLessThanOrEqual(stoppedAt);
    } finally {
      await server.start();
    }
    await zk.renewSession();
    // The next session's calls wait behind nothing of the old one.
    expect(await zk.exists('/')).not.toBeNull();
    expect(zk.lastReplyAt).toBeGreaterThan(stoppedAt);
  });

  it('a renewal started while the server is down keeps trying, and opens a session once it is back', async () => {
    const zk = await open(server.connectString, {
      sessionTimeoutMs: 2000,
      connectTimeoutMs: FAR,
      requestTimeoutMs: FAR,
    });
    const lost = nextSessionEvent(zk, 'lost');
    await server.stop();
    let renewal: Promise<unknown> | null = null;
    try {
      await lost;
      renewal = failure(zk.renewSession());
      // A call issued meanwhile waits for the renewal and goes out in its session.
      const call = zk.exists('/');
      // The server stays down for three times what a refusing host takes to be told apart
      // (about a second, see connectZk): the span is what this test is about.
      await new Promise((r) => setTimeout(r, 3000));
      expect(await Promise.race([renewal, 'pending'])).toBe('pending');
      await server.start();
      expect(await renewal).toBe('resolved');
      expect(await call).not.toBeNull();
    } finally {
      if (zk.state !== 'connected' && server) await server.start().catch(() => undefined);
    }
    expect(zk.state).toBe('connected');
  });

  it('a renewal closes the lost session the restarted server brought back, so its ephemeral nodes go at once', async () => {
    // Long enough that the restored session outlives the restart and the renewal by far.
    const SESSION_MS = 6000;
    const zk = await open(server.connectString, {
      sessionTimeoutMs: SESSION_MS,
      connectTimeoutMs: FAR,
      requestTimeoutMs: FAR,
    });
    await zk.create('/claim-of-the-old-session', bytes('x'), { ephemeral: true });
    const oldId = zk.sessionId;
    const lost = nextSessionEvent(zk, 'lost');
    await server.stop();
    try {
      await lost;
    } finally {
      await server.start();
    }
    // The server restores its sessions from its log with a fresh timeout: the old one lives
    // on there, with its ephemeral node, until it expires, unless the client closes it.
    await zk.renewSession();
    expect(zk.sessionId).not.toBe(oldId);
    const other = await open(server.connectString);
    expect(await other.exists('/claim-of-the-old-session')).toBeNull();
  });
});

describe('a lost session, through a partition', () => {
  it('a call waiting to be retried after a connection loss fails SESSION_EXPIRED with its session; it does not run in the next one', async () => {
    const host = await startZooKeeper();
    const proxy = await startProxy(host.connectString);
    try {
      const zk = await open(proxy.hostPort, {
        sessionTimeoutMs: 2000,
        requestTimeoutMs: FAR,
        retry: { maxAttempts: 1000, deadlineMs: FAR },
      });
      const direct = await open(host.connectString);
      const path = `/retried-${Date.now()}`;
      await direct.create(path, bytes('v'));
      const stopRenewing = renewLikeAWorker(zk);
      const lost = nextSessionEvent(zk, 'lost');
      const connected = nextSessionEvent(zk, 'connected');
      // Sent into silence: the read timeout drops the connection, the read waits to be
      // retried, and the session is lost before any connection comes back.
      proxy.setPartitioned(true);
      const old = failure(zk.get(path));
      await lost;
      proxy.setPartitioned(false);
      await connected;
      stopRenewing();
      const err = await old;
      expect(isZoottError(err) ? err.code : err).toBe('SESSION_EXPIRED');
      // The new session serves its own calls at once.
      expect((await zk.get(path)).data).toEqual(bytes('v'));
    } finally {
      await proxy.close();
    }
  });
});
