import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RabbitMqStartError } from './errors.js';

/** Where Debian's `openssl` package puts the binary; else it is looked up on PATH. */
const DEBIAN_OPENSSL = '/usr/bin/openssl';

/** PEM files of a throwaway certificate authority and the two certificates it signed. */
export interface TestCertificates {
  /** The folder that holds them all. */
  dir: string;
  /** The CA's certificate: what a client or the broker checks the other side against. */
  ca: string;
  /** The broker's certificate (subject `localhost`, names `localhost` and `127.0.0.1`) and key. */
  serverCert: string;
  serverKey: string;
  /** A client certificate (subject `zoott-test-client`) and key, for mutual TLS. */
  clientCert: string;
  clientKey: string;
}

/**
 * The `openssl` binary, or a {@link RabbitMqStartError} saying how to get it: a TLS test
 * without certificates fails, it never skips. `where` overrides the places looked at (the
 * Debian path, the PATH searched), for the test of that error.
 */
export function opensslBinary(where: { debian?: string; path?: string } = {}): string {
  const debian = where.debian ?? DEBIAN_OPENSSL;
  if (existsSync(debian)) return debian;
  const env = { ...process.env, PATH: where.path ?? process.env.PATH ?? '' };
  const which = spawnSync('openssl', ['version'], { stdio: 'ignore', env });
  if (which.status === 0) return 'openssl';
  throw new RabbitMqStartError(
    `a TLS broker needs the openssl binary to make its certificates, and there is none (${debian} does not exist, nor is openssl on PATH): sudo apt-get install openssl (scripts/ensure-test-deps.mjs does this on Debian/Ubuntu)`,
  );
}

function run(openssl: string, args: string[], cwd: string): void {
  const result = spawnSync(openssl, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0)
    throw new RabbitMqStartError(
      `openssl ${args[0]} failed (${result.error?.message ?? `exit ${result.status}`}): ${result.stderr}`,
    );
}

/** `openssl req` arguments for a new key: EC P-256 (quick to make on a loaded machine), unencrypted. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A key and a certificate signing request. */
function keyAndRequest(openssl: string, dir: string, name: string, subject: string): void {
  run(
    openssl,
    [
      'req',
      '-new',
      ...NEW_KEY,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${subject}`,
    ],
    dir,
  );
}

/** Signs `<name>.csr` with the CA into `<name>.pem`, with the extensions in `ext`. */
function sign(openssl: string, dir: string, name: string, ext: string): void {
  writeFileSync(path.join(dir, `${name}.ext`), ext);
  run(
    openssl,
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      `${name}.pem`,
      '-extfile',
      `${name}.ext`,
    ],
    dir,
  );
}

/**
 * Makes a new CA in `dir` and, signed by it, a server certificate for `localhost` and
 * `127.0.0.1` and a client certificate. Each call makes a CA of its own, so a second call
 * gives a CA that did not sign the first one's server certificate. Valid for two days.
 */
export function makeTestCertificates(dir: string): TestCertificates {
  const openssl = opensslBinary();
  mkdirSync(dir, { recursive: true });
  run(
    openssl,
    [
      'req',
      '-x509',
      ...NEW_KEY,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      `/CN=zoott throwaway test CA ${path.basename(dir)}`,
    ],
    dir,
  );
  keyAndRequest(openssl, dir, 'server', 'localhost');
  sign(
    openssl,
    dir,
    'server',
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  keyAndRequest(openssl, dir, 'client', 'zoott-test-client');
  sign(openssl, dir, 'client', 'extendedKeyUsage=clientAuth\n');
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    ca: file('ca.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server.key'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
  };
}
