import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { CREATOR_ALL_ACL, isZoottError, Perms, type ZoottError } from '@zoott/core';
import { serverTls, startProxy, type ZkProxy } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectZk, type ZkOptions } from '../src/index.js';
import { bytes, nextSessionEvent, open, text } from './helpers.js';
import { clientTls, securedServer, testCertificates } from './secured-servers.js';

// TLS to a real ZooKeeper's secureClientPort (the Netty connection factory): the server's
// certificate checked against a CA and the host, client certificates mapped to x509 ids by
// the server, and every way a TLS connect cannot work failing at once, saying which.

/** Longer than any test runs: a connect that returns at all was not ended by its timeout. */
const NEVER = 3_600_000;

type Server = Awaited<ReturnType<typeof securedServer>>;

describe('TLS to ZooKeeper', { timeout: 120_000 }, () => {
  const certs = testCertificates();
  let good: Server;
  let expired: Server;
  let wrongHost: Server;
  const proxies: ZkProxy[] = [];

  beforeAll(async () => {
    [good, expired, wrongHost] = await Promise.all([
      securedServer({ tls: serverTls(certs) }),
      securedServer({ tls: serverTls(certs, { which: 'expiredServer' }) }),
      securedServer({ tls: serverTls(certs, { which: 'wrongHostServer' }) }),
    ]);
  });
  afterAll(async () => {
    await Promise.allSettled(proxies.map((p) => p.close()));
    await Promise.allSettled([good, expired, wrongHost].map((s) => s?.stop()));
    certs.dispose();
  });

  /** Connects and expects the connect to fail, returning the error. */
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

  it('reads and writes over TLS, keeps the session through a dropped connection', async () => {
    const proxy = await startProxy(good.secureConnectString);
    proxies.push(proxy);
    const zk = await open(proxy.hostPort, { tls: clientTls(certs) });
    const path = `/tls-${randomUUID()}`;
    await zk.create(path, bytes('over tls'));
    const id = zk.sessionId;
    let fired: (type: string) => void = () => {};
    const changed = new Promise<string>((resolve) => {
      fired = resolve;
    });
    // Registered before the drop: the server has the watch, and the reconnect replays it.
    await zk.get(path, { watch: (e) => fired(e.type) });
    const back = nextSessionEvent(zk, 'reconnected');
    proxy.dropConnections();
    await back;
    expect(zk.sessionId).toBe(id);
    await zk.set(path, bytes('again'));
    expect(await changed).toBe('dataChanged');
    expect(text((await zk.get(path)).data)).toBe('again');
  });

  it('presents a client certificate: the session is x509:<subject>, which x509 ACLs admit alone', async () => {
    const owner = await open(good.secureConnectString, { tls: clientTls(certs, 'client') });
    // What the server made of the certificate, asked of the server itself.
    expect(await owner.whoAmI()).toEqual(
      expect.arrayContaining([{ scheme: 'x509', id: certs.client.dn }]),
    );
    const mine = `/x509-${randomUUID()}`;
    // The auth scheme expands to the identities the server gave the session: its certificate.
    await owner.create(mine, bytes('m'), { acl: CREATOR_ALL_ACL });
    expect((await owner.getAcl(mine)).acl).toEqual([
      { scheme: 'x509', id: certs.client.dn, perms: Perms.ALL },
    ]);
    const locked = `/x509-${randomUUID()}`;
    await owner.create(locked, bytes('s'), {
      acl: [{ scheme: 'x509', id: certs.client.dn, perms: Perms.ALL }],
    });
    const again = await open(good.secureConnectString, { tls: clientTls(certs, 'client') });
    expect(text((await again.get(locked)).data)).toBe('s');
    const other = await open(good.secureConnectString, { tls: clientTls(certs, 'otherClient') });
    const anonymous = await open(good.secureConnectString, { tls: clientTls(certs) });
    for (const stranger of [other, anonymous]) {
      await expect(stranger.get(locked)).rejects.toMatchObject({ code: 'NO_AUTH' });
      await expect(stranger.set(locked, bytes('x'))).rejects.toMatchObject({ code: 'NO_AUTH' });
    }
  });

  it('opens an encrypted client key with its passphrase, and says which option is wrong otherwise', async () => {
    const encrypted = {
      ...clientTls(certs, 'client'),
      key: readFileSync(certs.encryptedClientKey),
    };
    const zk = await open(good.secureConnectString, {
      tls: { ...encrypted, passphrase: certs.clientKeyPassphrase },
    });
    await zk.create(`/enc-${randomUUID()}`, undefined, { acl: CREATOR_ALL_ACL });
    const cases: Array<[ZkOptions['tls'], string, RegExp]> = [
      [encrypted, 'tls.key', /encrypted and no passphrase/],
      [{ ...encrypted, passphrase: 'wrong' }, 'tls.key', /passphrase does not decrypt/],
      [{ ...clientTls(certs, 'client'), key: undefined }, 'tls.cert', /go together/],
      [{ ca: 'not a certificate' }, 'tls.ca', /holds no PEM certificate/],
      [
        { ...clientTls(certs, 'client'), key: readFileSync(certs.otherClient.key) },
        'tls.key',
        /does not belong to the certificate/,
      ],
    ];
    for (const [options, field, message] of cases) {
      const err = await refused(good.secureConnectString, { tls: options });
      expect(err, field).toMatchObject({ code: 'INVALID_CONFIG', field });
      expect(err.message).toMatch(message);
    }
  });

  describe('a connect that cannot work fails at once, saying why', () => {
    it('a server certificate from another CA', async () => {
      const err = await refused(good.secureConnectString, {
        tls: { ca: readFileSync(certs.otherCa) },
      });
      expect(err).toMatchObject({ code: 'CONNECTION_LOSS', field: 'tls.ca' });
      expect(err.message).toMatch(/not signed by a trusted CA \(SELF_SIGNED_CERT_IN_CHAIN/);
      expect(err.message).toContain(good.secureConnectString);
    });

    it('an expired server certificate', async () => {
      const err = await refused(expired.secureConnectString, { tls: clientTls(certs) });
      expect(err).toMatchObject({ code: 'CONNECTION_LOSS', field: 'tls' });
      expect(err.message).toMatch(/certificate has expired \(CERT_HAS_EXPIRED\)/);
    });

    it('a certificate for another host; connects with hostname verification off', async () => {
      const err = await refused(wrongHost.secureConnectString, { tls: clientTls(certs) });
      expect(err).toMatchObject({ code: 'CONNECTION_LOSS', field: 'tls.verifyHostname' });
      expect(err.message).toMatch(
        /certificate is not for 127\.0\.0\.1 \(it names DNS:zk\.invalid\)/,
      );
      const zk = await open(wrongHost.secureConnectString, {
        tls: clientTls(certs, undefined, { verifyHostname: false }),
      });
      expect(zk.state).toBe('connected');
    });

    it('a TLS client on a plain port', async () => {
      const err = await refused(good.connectString, { tls: clientTls(certs) });
      expect(err).toMatchObject({ code: 'CONNECTION_LOSS', field: 'tls' });
      expect(err.message).toMatch(/speaks plain ZooKeeper, not TLS/);
    });

    it('a plain client on a TLS port', async () => {
      const err = await refused(good.secureConnectString, {});
      expect(err).toMatchObject({ code: 'CONNECTION_LOSS', field: 'tls' });
      expect(err.message).toMatch(/expects TLS \(a secureClientPort\)/);
    });

    it('a client certificate the server does not trust', async () => {
      const err = await refused(good.secureConnectString, {
        tls: clientTls(certs, 'foreignClient'),
      });
      expect(err).toMatchObject({ code: 'CONNECTION_LOSS', field: 'tls.cert' });
      expect(err.message).toMatch(/wants a client certificate it trusts/);
    });

    it('every server of an ensemble, each for its own reason', async () => {
      const err = await refused(`${good.connectString},${expired.secureConnectString}`, {
        tls: clientTls(certs),
      });
      expect(err.message).toContain(`${good.connectString}: the port speaks plain ZooKeeper`);
      expect(err.message).toContain(
        `${expired.secureConnectString}: the server's certificate has expired`,
      );
    });

    it('a server offering only TLS 1.1, even where the process allows it by default', async () => {
      const server = tls.createServer(
        {
          cert: readFileSync(certs.server.cert),
          key: readFileSync(certs.server.key),
          minVersion: 'TLSv1',
          maxVersion: 'TLSv1.1',
          ciphers: 'DEFAULT@SECLEVEL=0',
        },
        (socket) => socket.end(),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const saved = { min: tls.DEFAULT_MIN_VERSION, ciphers: tls.DEFAULT_CIPHERS };
      // What an application embedding zoott may have done to reach some old service of its own.
      tls.DEFAULT_MIN_VERSION = 'TLSv1';
      (tls as { DEFAULT_CIPHERS: string }).DEFAULT_CIPHERS = 'DEFAULT@SECLEVEL=0';
      try {
        const { port } = server.address() as { port: number };
        const err = await refused(`127.0.0.1:${port}`, { tls: clientTls(certs) });
        expect(err).toMatchObject({ code: 'CONNECTION_LOSS', field: 'tls' });
        expect(err.message).toMatch(/share no TLS version/);
      } finally {
        tls.DEFAULT_MIN_VERSION = saved.min;
        (tls as { DEFAULT_CIPHERS: string }).DEFAULT_CIPHERS = saved.ciphers;
        server.close();
      }
    });
  });
});
