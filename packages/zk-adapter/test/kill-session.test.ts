import { randomBytes } from 'node:crypto';
import { startProxy } from '@zoott/zk-testkit';
import { describe, expect, it } from 'vitest';
import { parseConnectString } from '../src/connect-string.js';
import { closeSessionAs, killSession } from '../src/kill-session.js';
import { sessionCredentials } from '../src/zk-coordinator.js';
import { fakeServer } from './fake-server.js';
import { freshNamespace, nextSessionEvent, open, zkServer } from './helpers.js';

const CLOSE_SESSION = -11;
const SESSION_MOVED = -118;

/**
 * killSession's verdict on one try (closeSessionAs): a session it calls gone must be gone, and
 * a refused close must not count, or killSession would wait for a client that kept its session.
 */
describe('killSession: the verdict of one close', () => {
  const host = () => parseConnectString(zkServer()).hosts[0]!;

  it('a closed live session: the next try finds it gone, and its client learns it', async () => {
    const zk = await open(await freshNamespace());
    const creds = sessionCredentials(zk)!;
    const lost = nextSessionEvent(zk, 'lost');
    // The server drops the connection as it closes the session, replies unsent: no verdict.
    await closeSessionAs(host(), creds.id, creds.password, zk.sessionTimeoutMs);
    await lost;
    expect(await closeSessionAs(host(), creds.id, creds.password, zk.sessionTimeoutMs)).toBe(true);
  });

  it('a session the server no longer knows is gone (it answers the reattach with timeout 0)', async () => {
    const id = randomBytes(8);
    expect(await closeSessionAs(host(), id, randomBytes(16), 10_000)).toBe(true);
  });

  it('a refused close (the client took its session back) is no verdict', async () => {
    const fake = await fakeServer((type) => (type === CLOSE_SESSION ? SESSION_MOVED : 0));
    try {
      const [h] = parseConnectString(fake.hostPort).hosts;
      expect(await closeSessionAs(h!, randomBytes(8), randomBytes(16), 10_000)).toBe(false);
      fake.answer = () => 0;
      expect(await closeSessionAs(h!, randomBytes(8), randomBytes(16), 10_000)).toBe(true);
      expect(fake.seen.get(CLOSE_SESSION)).toBe(2);
    } finally {
      await fake.close();
    }
  });
});

describe('killSession: a client between connections', () => {
  it('kills the session of a suspended client, which learns it once it is back', async () => {
    const chroot = (await freshNamespace()).slice(zkServer().length);
    const proxy = await startProxy(zkServer());
    try {
      // On a loaded machine a client can be between connections when a test ends its session:
      // its session lives on at the server, and its id and password are what close it.
      const zk = await open(`${proxy.hostPort}${chroot}`, { sessionTimeoutMs: 9_000 });
      const suspended = nextSessionEvent(zk, 'suspended');
      proxy.setPartitioned(true);
      await suspended;
      const lost = nextSessionEvent(zk, 'lost');
      const killing = killSession(zk, { via: zkServer() });
      proxy.setPartitioned(false);
      await killing;
      await lost;
      expect(zk.state).toBe('lost');
    } finally {
      await proxy.close();
    }
  });
});
