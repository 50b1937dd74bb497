import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fourLetter,
  makeZkTestCertificates,
  serverTls,
  startEnsemble,
  startZooKeeper,
  type ZkTestCertificates,
  type ZooKeeperEnsemble,
  type ZooKeeperServer,
} from '../src/index.js';

/** A ZooKeeper connect request (session 0, 10 s) framed for the wire. */
function connectRequest(): Buffer {
  const body = Buffer.alloc(4 + 8 + 4 + 8 + 4 + 16);
  let o = body.writeInt32BE(0, 0);
  o = body.writeBigInt64BE(0n, o);
  o = body.writeInt32BE(10_000, o);
  o = body.writeBigInt64BE(0n, o);
  body.writeInt32BE(16, o);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

/**
 * Opens a TLS connection verified against `ca`, sends a connect request and resolves with the
 * session timeout the server granted: a ZooKeeper answering over TLS.
 */
function tlsSessionTimeout(
  hostPort: string,
  options: { ca: string; cert?: string; key?: string },
): Promise<number> {
  const [host, port] = hostPort.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host,
      port: Number(port),
      ca: readFileSync(options.ca),
      ...(options.cert ? { cert: readFileSync(options.cert) } : {}),
      ...(options.key ? { key: readFileSync(options.key) } : {}),
    });
    let got = Buffer.alloc(0);
    socket.once('secureConnect', () => socket.write(connectRequest()));
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 12) {
        socket.destroy();
        resolve(got.readInt32BE(8));
      }
    });
    socket.once('error', reject);
  });
}

describe('zk-testkit: secured servers', { timeout: 180_000 }, () => {
  let dir: string;
  let certs: ZkTestCertificates;
  const started: Array<ZooKeeperServer | ZooKeeperEnsemble> = [];

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'zk-testkit-certs-'));
    certs = makeZkTestCertificates(dir);
  });
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes a CA, server certificates good, expired and for another host, and client certificates', () => {
    const ca = new X509Certificate(readFileSync(certs.ca));
    const server = new X509Certificate(readFileSync(certs.server.cert));
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.checkHost('localhost')).toBe('localhost');
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    const expired = new X509Certificate(readFileSync(certs.expiredServer.cert));
    expect(Date.parse(expired.validTo)).toBeLessThan(Date.now());
    const wrongHost = new X509Certificate(readFileSync(certs.wrongHostServer.cert));
    expect(wrongHost.checkIP('127.0.0.1')).toBeUndefined();
    expect(wrongHost.checkHost('localhost')).toBeUndefined();
    const client = new X509Certificate(readFileSync(certs.client.cert));
    expect(client.checkIssued(ca)).toBe(true);
    expect(client.subject.split('\n').reverse().join(',')).toBe(certs.client.dn);
    const foreign = new X509Certificate(readFileSync(certs.foreignClient.cert));
    expect(foreign.checkIssued(ca)).toBe(false);
    // The encrypted key opens with its passphrase only.
    const encrypted = readFileSync(certs.encryptedClientKey);
    expect(() => createPrivateKey({ key: encrypted })).toThrow();
    expect(
      createPrivateKey({ key: encrypted, passphrase: certs.clientKeyPassphrase }).asymmetricKeyType,
    ).toBe('ec');
  });

  it('starts a standalone server with a TLS port beside its plain one, and SASL users', async () => {
    const server = await startZooKeeper({
      security: { tls: serverTls(certs), sasl: { users: { alice: 'alice-secret' } } },
    });
    started.push(server);
    expect(server.kind).toBe('local');
    expect(server.secureConnectString).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(server.secureConnectString).not.toBe(server.connectString);
    expect(await fourLetter(server.connectString, 'ruok')).toBe('imok');
    expect(await tlsSessionTimeout(server.secureConnectString!, { ca: certs.ca })).toBe(10_000);
    expect(
      await tlsSessionTimeout(server.secureConnectString!, {
        ca: certs.ca,
        cert: certs.client.cert,
        key: certs.client.key,
      }),
    ).toBe(10_000);
    // A restart keeps the secure port.
    await server.stop();
    await server.start();
    expect(await tlsSessionTimeout(server.secureConnectString!, { ca: certs.ca })).toBe(10_000);
  });

  it('starts a 3-server ensemble whose every member has a TLS port', async () => {
    const ensemble = await startEnsemble({ security: { tls: serverTls(certs) } });
    started.push(ensemble);
    const members = ensemble.secureConnectString?.split(',') ?? [];
    expect(members).toHaveLength(3);
    for (const member of members)
      expect(await tlsSessionTimeout(member, { ca: certs.ca })).toBeGreaterThan(0);
  });
});
