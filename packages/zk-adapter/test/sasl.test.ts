import { randomUUID } from 'node:crypto';
import { CREATOR_ALL_ACL, isZoottError, Perms, type ZoottError } from '@zoott/core';
import {
  RESTART_BOUND_MS,
  serverTls,
  startProxy,
  type ZkProxy,
  type ZooKeeperSecurity,
} from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectZk, killSession, type ZkOptions } from '../src/index.js';
import {
  answerChallenge,
  checkRspauth,
  parseDirectives,
  readChallenge,
} from '../src/sasl-digest-md5.js';
import { fakeServer } from './fake-server.js';
import { bytes, nextSessionEvent, open, text, zkServer } from './helpers.js';
import { clientTls, securedServer, testCertificates } from './secured-servers.js';

// SASL DIGEST-MD5 against real ZooKeeper servers with a JAAS DigestLoginModule: the RFC 2831
// client, the `sasl` ACL scheme, a login on every connection and every new session, and a
// refused login failing at once.

const NEVER = 3_600_000;
const USERS = { alice: 'alice-secret', bob: 'bob-secret', ünï: 'pässwörd' };
const alice = { username: 'alice', password: 'alice-secret' } as const;

describe('DIGEST-MD5 (RFC 2831)', () => {
  it('answers the RFC example with its response and rspauth', () => {
    // RFC 2831 section 4: chris / secret at elwood.innosoft.com, IMAP.
    const challenge = readChallenge(
      'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8',
    );
    const answer = answerChallenge(
      challenge,
      'chris',
      'secret',
      'OA6MHXh6VqTrRk',
      'imap/elwood.innosoft.com',
    );
    expect(answer.response).toBe('d388dad90d4bbd760a152321f2143af7');
    expect(answer.rspauth).toBe('ea40f60335c427b5527b84dbabcdfffd');
    expect(answer.message).toContain('digest-uri="imap/elwood.innosoft.com"');
    expect(checkRspauth('rspauth=ea40f60335c427b5527b84dbabcdfffd', answer.rspauth)).toBe(true);
    expect(checkRspauth('rspauth=00000000000000000000000000000000', answer.rspauth)).toBe(false);
  });

  it('reads quoted, escaped and repeated directives', () => {
    const d = parseDirectives(
      'realm="a\\"b",realm="c", nonce="x,y",algorithm=md5-sess ,qop="auth,auth-int"',
    );
    expect(d.get('realm')).toEqual(['a"b', 'c']);
    expect(d.get('nonce')).toEqual(['x,y']);
    expect(d.get('algorithm')).toEqual(['md5-sess']);
    expect(d.get('qop')).toEqual(['auth,auth-int']);
  });

  it('refuses a challenge without a nonce, without qop auth, or of another algorithm', () => {
    expect(() => readChallenge('realm="r",algorithm=md5-sess')).toThrow(/no nonce/);
    expect(() => readChallenge('nonce="n",qop="auth-conf",algorithm=md5-sess')).toThrow(/not auth/);
    expect(() => readChallenge('nonce="n",algorithm=md5')).toThrow(/not md5-sess/);
  });
});

describe('SASL against servers no real one here can play', () => {
  /** A SetSASLResponse payload: the token, length first. */
  const token = (text: string) => {
    const bytes = Buffer.from(text);
    const out = Buffer.alloc(4 + bytes.length);
    out.writeInt32BE(bytes.length, 0);
    bytes.copy(out, 4);
    return out;
  };
  /** A fake server answering the SASL requests with `tokens`, in turn. */
  const saslServer = (tokens: string[]) => {
    let n = 0;
    return fakeServer((type) => (type === 102 ? { err: 0, body: token(tokens[n++] ?? '') } : 0));
  };
  const CHALLENGE = 'realm="zk-sasl-md5",nonce="abc",charset=utf-8,algorithm=md5-sess';

  it('refuses a server that cannot prove it knows the password (a wrong rspauth)', async () => {
    const fake = await saslServer([CHALLENGE, 'rspauth=00000000000000000000000000000000']);
    try {
      const err = await connectZk(fake.hostPort, {
        sasl: alice,
        connectTimeoutMs: 3_600_000,
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'AUTH_FAILED', field: 'sasl' });
      expect((err as Error).message).toMatch(/does not prove it knows the password/);
      // Nothing but the login went out.
      expect([...fake.seen.keys()]).toEqual([102]);
    } finally {
      await fake.close();
    }
  });

  it('refuses a challenge it cannot answer, saying what is wrong with it', async () => {
    const fake = await saslServer(['nonce="abc",qop="auth-conf",algorithm=md5-sess']);
    try {
      const err = await connectZk(fake.hostPort, {
        sasl: alice,
        connectTimeoutMs: 3_600_000,
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'AUTH_FAILED' });
      expect((err as Error).message).toMatch(/offers qop auth-conf, not auth/);
    } finally {
      await fake.close();
    }
  });
});

describe('SASL on a real ZooKeeper', { timeout: 120_000 }, () => {
  const certs = testCertificates();
  let server: Awaited<ReturnType<typeof securedServer>>;
  let enforcing: Awaited<ReturnType<typeof securedServer>>;
  const proxies: ZkProxy[] = [];

  beforeAll(async () => {
    [server, enforcing] = await Promise.all([
      securedServer({ tls: serverTls(certs), sasl: { users: USERS } }),
      securedServer({ sasl: { users: USERS, enforce: true } }),
    ]);
  });
  afterAll(async () => {
    await Promise.allSettled(proxies.map((p) => p.close()));
    await Promise.allSettled([server, enforcing].map((s) => s?.stop()));
    certs.dispose();
  });

  async function refused(connect: string, options: ZkOptions): Promise<ZoottError> {
    const err = await connectZk(connect, { connectTimeoutMs: NEVER, ...options }).then(
      async (zk) => {
        await zk.close();
        throw new Error('connected');
      },
      (e: unknown) => e,
    );
    if (!isZoottError(err)) throw err;
    return err;
  }

  it('logs in: the session is sasl:<user>, which sasl ACLs admit alone', async () => {
    const owner = await open(server.connectString, { sasl: alice });
    const both = await open(server.connectString, { sasl: alice });
    await both.addAuth('digest', 'carol:carol-pw');
    const ids = await both.whoAmI();
    expect(ids).toHaveLength(3);
    expect(ids).toEqual(
      expect.arrayContaining([
        { scheme: 'ip', id: '127.0.0.1' },
        { scheme: 'sasl', id: 'alice' },
        { scheme: 'digest', id: 'carol' },
      ]),
    );
    const mine = `/sasl-${randomUUID()}`;
    await owner.create(mine, bytes('m'), { acl: CREATOR_ALL_ACL });
    expect((await owner.getAcl(mine)).acl).toEqual([
      { scheme: 'sasl', id: 'alice', perms: Perms.ALL },
    ]);
    const locked = `/sasl-${randomUUID()}`;
    await owner.create(locked, bytes('s'), {
      acl: [{ scheme: 'sasl', id: 'alice', perms: Perms.ALL }],
    });
    const bob = await open(server.connectString, {
      sasl: { username: 'bob', password: 'bob-secret' },
    });
    const nobody = await open(server.connectString);
    for (const stranger of [bob, nobody])
      await expect(stranger.get(locked)).rejects.toMatchObject({ code: 'NO_AUTH' });
    // A user and password outside Latin-1 hash as UTF-8, as the JDK's server does.
    const unicode = await open(server.connectString, {
      sasl: { username: 'ünï', password: 'pässwörd' },
    });
    await unicode.create(`/sasl-${randomUUID()}`, undefined, { acl: CREATOR_ALL_ACL });
  });

  it('logs in over TLS too', async () => {
    const zk = await open(server.secureConnectString, { sasl: alice, tls: clientTls(certs) });
    const path = `/sasl-tls-${randomUUID()}`;
    await zk.create(path, undefined, { acl: CREATOR_ALL_ACL });
    expect((await zk.getAcl(path)).acl).toEqual([
      { scheme: 'sasl', id: 'alice', perms: Perms.ALL },
    ]);
  });

  it('logs in again on every connection and every new session', async () => {
    const proxy = await startProxy(server.connectString);
    proxies.push(proxy);
    const zk = await open(proxy.hostPort, { sasl: alice, sessionTimeoutMs: 4000 });
    const locked = `/sasl-${randomUUID()}`;
    await zk.create(locked, bytes('v'), {
      acl: [{ scheme: 'sasl', id: 'alice', perms: Perms.ALL }],
    });
    // ZooKeeper keeps identities per connection: a new one has none until it logs in.
    const back = nextSessionEvent(zk, 'reconnected');
    proxy.dropConnections();
    await back;
    expect(text((await zk.get(locked)).data)).toBe('v');
    await killSession(zk);
    await zk.renewSession();
    expect(text((await zk.get(locked)).data)).toBe('v');
  });

  it('logs in before anything else, also before what was queued while disconnected', async () => {
    // This server ends a session that sends a request before its SASL login.
    const proxy = await startProxy(enforcing.connectString);
    proxies.push(proxy);
    const zk = await open(proxy.hostPort, { sasl: alice, sessionTimeoutMs: 4000 });
    const path = `/enforced-${randomUUID()}`;
    await zk.create(path, bytes('1'));
    let fired: (type: string) => void = () => {};
    const changed = new Promise<string>((resolve) => {
      fired = resolve;
    });
    await zk.get(path, { watch: (e) => fired(e.type) });
    const id = zk.sessionId;
    proxy.setPartitioned(true);
    await nextSessionEvent(zk, 'suspended');
    const queued = [zk.set(path, bytes('2')), zk.get(path)];
    const back = nextSessionEvent(zk, 'reconnected');
    proxy.setPartitioned(false);
    await back;
    await Promise.all(queued);
    expect(zk.sessionId).toBe(id);
    expect(await changed).toBe('dataChanged');
    expect(text((await zk.get(path)).data)).toBe('2');
    // Without a login the same server refuses the session's first request.
    const anonymous = await connectZk(enforcing.connectString);
    try {
      const refused = await anonymous.get(path).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'AUTH_FAILED', op: 'get', field: 'sasl' });
      expect((refused as Error).message).toMatch(/logged in with SASL \(enforce\.auth\.enabled\)/);
    } finally {
      await anonymous.close();
    }
  });

  it('a refused login fails at once with AUTH_FAILED naming the user, never the password', async () => {
    for (const sasl of [
      { username: 'alice', password: 'wrong-secret' },
      { username: 'mallory', password: 'mallory-secret' },
    ]) {
      const err = await refused(server.connectString, { sasl });
      expect(err).toMatchObject({ code: 'AUTH_FAILED', field: 'sasl' });
      expect(err.message).toContain(
        `SASL DIGEST-MD5 as "${sasl.username}": the server refused the user or password`,
      );
      expect(err.message).not.toContain(sasl.password);
    }
  });

  it('a refused login fails at once though another server of the connect string is down', async () => {
    // Every server of an ensemble checks the same users: one refusal is the verdict.
    const err = await refused(`${server.connectString},127.0.0.1:1`, {
      sasl: { username: 'alice', password: 'wrong-secret' },
    });
    expect(err).toMatchObject({ code: 'AUTH_FAILED', field: 'sasl' });
  });

  it('a server without SASL says so at once', async () => {
    const err = await refused(zkServer(), { sasl: alice });
    expect(err).toMatchObject({ code: 'AUTH_FAILED', field: 'sasl' });
    expect(err.message).toMatch(/sent no challenge: it does not take SASL logins/);
  });

  it('a login refused on a later connection ends the session with AUTH_FAILED, saying why', async () => {
    const own = await securedServer({ sasl: { users: { alice: 'alice-secret' } } });
    try {
      // Longer than any restart that succeeds: the session itself outlives the restart.
      const zk = await open(own.connectString, {
        sasl: alice,
        sessionTimeoutMs: RESTART_BOUND_MS + 5000,
      });
      await zk.create(`/before-${randomUUID()}`);
      const lost = new Promise<void>((resolve) =>
        zk.onSession((e) => (e.type === 'lost' ? resolve() : undefined)),
      );
      await own.stop();
      // Waits for the reconnection, and then hears why the session ended.
      const pending = zk.get('/').catch((e: unknown) => e);
      // The server comes back knowing another password for alice.
      (own as unknown as { layout: { security: ZooKeeperSecurity } }).layout.security = {
        sasl: { users: { alice: 'changed-meanwhile' } },
      };
      await own.start();
      await lost;
      const err = await pending;
      expect(err).toMatchObject({ code: 'AUTH_FAILED' });
      expect((err as Error).message).toContain(
        'session lost: SASL DIGEST-MD5 as "alice": the server refused the user or password',
      );
    } finally {
      await own.stop();
    }
  });
});
