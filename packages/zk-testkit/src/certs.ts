import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ZooKeeperStartError } from './errors.js';

/** Where Debian's `openssl` package puts the binary; else it is looked up on PATH. */
const DEBIAN_OPENSSL = '/usr/bin/openssl';

/** A client certificate, its key and the subject the server's x509 ACL scheme sees. */
export interface TestClientCertificate {
  cert: string;
  key: string;
  /** The subject as ZooKeeper's X509AuthenticationProvider names it (RFC 2253): `CN=...,O=zoott`. */
  dn: string;
}

/** A server identity: its PEM files and the PKCS12 key store a ZooKeeper server loads. */
export interface TestServerCertificate {
  cert: string;
  key: string;
  keyStore: string;
}

/**
 * A throwaway certificate authority with everything a secured ZooKeeper test needs, made at
 * test time with `openssl` (and the JDK's `keytool` for the trust store): PEM files for the
 * client side, PKCS12 stores for the server side, all under one folder.
 */
export interface ZkTestCertificates {
  dir: string;
  /** The CA certificate (PEM) that signed everything below but `foreignClient`. */
  ca: string;
  /** Another CA's certificate, which signed nothing the servers present: a "bad CA". */
  otherCa: string;
  /** Password of every key store and trust store here. */
  storePassword: string;
  /** PKCS12 trust store holding `ca`: what a server checks client certificates against. */
  trustStore: string;
  /** Names `localhost` and `127.0.0.1`. */
  server: TestServerCertificate;
  /** Names `localhost` and `127.0.0.1`, but expired yesterday. */
  expiredServer: TestServerCertificate;
  /** Valid, but for `zk.invalid` only: a client connecting to 127.0.0.1 must refuse it. */
  wrongHostServer: TestServerCertificate;
  /** `CN=zoott-client,O=zoott`. */
  client: TestClientCertificate;
  /** `CN=zoott-other,O=zoott`: a second identity for x509 ACL tests. */
  otherClient: TestClientCertificate;
  /** `client`'s key, encrypted (PKCS#8, AES-256) with `clientKeyPassphrase`. */
  encryptedClientKey: string;
  clientKeyPassphrase: string;
  /** Signed by `otherCa`: a client certificate the servers do not trust. */
  foreignClient: TestClientCertificate;
}

/**
 * The `openssl` binary, or a {@link ZooKeeperStartError} saying how to get it: a secured
 * server without certificates cannot start, and its tests fail, never skip.
 */
export function opensslBinary(): string {
  if (existsSync(DEBIAN_OPENSSL)) return DEBIAN_OPENSSL;
  if (spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0) return 'openssl';
  throw new ZooKeeperStartError(
    `a ZooKeeper with TLS needs the openssl binary to make its certificates, and there is none (${DEBIAN_OPENSSL} does not exist, nor is openssl on PATH): sudo apt-get install openssl`,
  );
}

/** `keytool` next to the `java` that runs the servers, else on PATH. */
export function keytoolBinary(java = 'java'): string {
  const home = process.env.JAVA_HOME;
  const candidates = [
    ...(home ? [path.join(home, 'bin', 'keytool')] : []),
    ...(java.includes(path.sep) ? [path.join(path.dirname(java), 'keytool')] : []),
    'keytool',
  ];
  for (const candidate of candidates)
    if (spawnSync(candidate, ['-help'], { stdio: 'ignore' }).status === 0) return candidate;
  throw new ZooKeeperStartError(
    "a ZooKeeper with TLS needs the JDK's keytool to make its trust store, and none runs (looked at $JAVA_HOME/bin, next to java, and on PATH); it comes with the Java runtime ZooKeeper runs on",
  );
}

function run(bin: string, args: string[], cwd: string): void {
  const result = spawnSync(bin, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0)
    throw new ZooKeeperStartError(
      `${path.basename(bin)} ${args[0]} failed (${result.error?.message ?? `exit ${result.status}`}): ${result.stderr}`,
    );
}

/** EC P-256 keys: quick to make on a loaded machine. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const SERVER_NAMES = 'subjectAltName=DNS:localhost,IP:127.0.0.1';

/** A self-signed CA `<name>.pem` with its key. */
function makeCa(openssl: string, dir: string, name: string): void {
  run(
    openssl,
    [
      'req',
      '-x509',
      ...NEW_KEY,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      `/O=zoott throwaway test CA/CN=${name} ${path.basename(dir)}`,
    ],
    dir,
  );
}

/** A key and a certificate for `subject`, signed by `ca` with the extensions `ext`. */
function issue(
  openssl: string,
  dir: string,
  options: { name: string; subject: string; ca: string; ext: string; days: number },
): { cert: string; key: string } {
  run(
    openssl,
    [
      'req',
      '-new',
      ...NEW_KEY,
      '-keyout',
      `${options.name}.key`,
      '-out',
      `${options.name}.csr`,
      '-subj',
      options.subject,
    ],
    dir,
  );
  writeFileSync(path.join(dir, `${options.name}.ext`), `${options.ext}\n`);
  run(
    openssl,
    [
      'x509',
      '-req',
      '-in',
      `${options.name}.csr`,
      '-CA',
      `${options.ca}.pem`,
      '-CAkey',
      `${options.ca}.key`,
      '-CAcreateserial',
      // A negative count ends the validity before it starts: an expired certificate.
      '-days',
      String(options.days),
      '-out',
      `${options.name}.pem`,
      '-extfile',
      `${options.name}.ext`,
    ],
    dir,
  );
  return {
    cert: path.join(dir, `${options.name}.pem`),
    key: path.join(dir, `${options.name}.key`),
  };
}

/** Makes every certificate and store of {@link ZkTestCertificates} in `dir`. */
export function makeZkTestCertificates(dir: string, java?: string): ZkTestCertificates {
  const openssl = opensslBinary();
  const keytool = keytoolBinary(java);
  mkdirSync(dir, { recursive: true });
  const storePassword = 'zoott-test-store';
  makeCa(openssl, dir, 'ca');
  makeCa(openssl, dir, 'other-ca');
  const serverExt = `${SERVER_NAMES}\nextendedKeyUsage=serverAuth`;
  const server = (name: string, ext: string, days: number): TestServerCertificate => {
    const pair = issue(openssl, dir, { name, subject: '/CN=localhost', ca: 'ca', ext, days });
    const keyStore = path.join(dir, `${name}.p12`);
    run(
      openssl,
      [
        'pkcs12',
        '-export',
        '-in',
        pair.cert,
        '-inkey',
        pair.key,
        '-certfile',
        'ca.pem',
        '-name',
        'zookeeper',
        '-out',
        keyStore,
        '-passout',
        `pass:${storePassword}`,
      ],
      dir,
    );
    return { ...pair, keyStore };
  };
  const client = (name: string, cn: string, ca = 'ca'): TestClientCertificate => ({
    ...issue(openssl, dir, {
      name,
      subject: `/O=zoott/CN=${cn}`,
      ca,
      ext: 'extendedKeyUsage=clientAuth',
      days: 2,
    }),
    dn: `CN=${cn},O=zoott`,
  });
  const trustStore = path.join(dir, 'trust.p12');
  run(
    keytool,
    [
      '-importcert',
      '-noprompt',
      '-alias',
      'zoott-test-ca',
      '-file',
      'ca.pem',
      '-keystore',
      trustStore,
      '-storetype',
      'PKCS12',
      '-storepass',
      storePassword,
    ],
    dir,
  );
  const first = client('client', 'zoott-client');
  const clientKeyPassphrase = 'zoott key passphrase';
  const encryptedClientKey = path.join(dir, 'client-encrypted.key');
  run(
    openssl,
    [
      'pkcs8',
      '-topk8',
      '-in',
      first.key,
      '-out',
      encryptedClientKey,
      '-v2',
      'aes-256-cbc',
      '-passout',
      `pass:${clientKeyPassphrase}`,
    ],
    dir,
  );
  return {
    dir,
    ca: path.join(dir, 'ca.pem'),
    otherCa: path.join(dir, 'other-ca.pem'),
    storePassword,
    trustStore,
    server: server('server', serverExt, 2),
    expiredServer: server('server-expired', serverExt, -1),
    wrongHostServer: server(
      'server-wrong-host',
      'subjectAltName=DNS:zk.invalid\nextendedKeyUsage=serverAuth',
      2,
    ),
    client: first,
    otherClient: client('other-client', 'zoott-other'),
    encryptedClientKey,
    clientKeyPassphrase,
    foreignClient: client('foreign-client', 'zoott-foreign', 'other-ca'),
  };
}
