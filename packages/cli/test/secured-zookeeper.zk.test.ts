import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Perms } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import {
  makeZkTestCertificates,
  serverTls,
  startZooKeeper,
  type ZkTestCertificates,
  type ZooKeeperServer,
} from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, json, type RunResult, start, zoott } from './helpers.js';

// The CLI (and so its dashboard, a verb of it) on a secured ZooKeeper, from the outside: the
// shared TLS and SASL settings by flag, environment and config file, x509 and sasl worlds
// (init --acl, lock-down, doctor, strangers refused naming the scheme), and each connect that
// cannot work exiting 3 at once, saying which.

/** Longer than any test runs: a command that exits at all was not ended by a timeout. */
const NEVER = '1h';
const OPS = { user: 'ops', password: 'ops-secret' };

type Secured = ZooKeeperServer & { secureConnectString: string };

describe('zoott on a secured ZooKeeper', { timeout: 180_000 }, () => {
  let dir: string;
  let certs: ZkTestCertificates;
  let zk: Secured;
  let expired: Secured;
  let wrongHost: Secured;
  /** The secure address with a fresh chroot, made by `fresh()`. */
  let files: { sasl: string; badSasl: string; passphrase: string };

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'zoott-cli-secured-'));
    certs = makeZkTestCertificates(join(dir, 'certs'));
    const users = { ops: OPS.password, dev: 'dev-secret' };
    const started = (await Promise.all([
      startZooKeeper({ heapMb: 128, security: { tls: serverTls(certs), sasl: { users } } }),
      startZooKeeper({
        heapMb: 128,
        security: { tls: serverTls(certs, { which: 'expiredServer' }) },
      }),
      startZooKeeper({
        heapMb: 128,
        security: { tls: serverTls(certs, { which: 'wrongHostServer' }) },
      }),
    ])) as Secured[];
    [zk, expired, wrongHost] = started as [Secured, Secured, Secured];
    files = {
      sasl: join(dir, 'sasl'),
      badSasl: join(dir, 'bad-sasl'),
      passphrase: join(dir, 'passphrase'),
    };
    writeFileSync(files.sasl, `${OPS.user}:${OPS.password}\n`, { mode: 0o600 });
    writeFileSync(files.badSasl, `${OPS.user}:not-the-password\n`, { mode: 0o600 });
    writeFileSync(files.passphrase, `${certs.clientKeyPassphrase}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await Promise.allSettled([zk, expired, wrongHost].map((s) => s?.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh chroot on the secured server's TLS port. */
  const fresh = () => `${zk.secureConnectString}/cli-${randomUUID()}`;
  const tlsFlags = (who?: 'client' | 'otherClient') => [
    '--zk-tls-ca',
    certs.ca,
    ...(who ? ['--zk-tls-cert', certs[who].cert, '--zk-tls-key', certs[who].key] : []),
  ];
  /** The ACL of `path` as a SASL-logged-in ops session sees it (TLS, with the client certificate). */
  async function aclOf(connect: string, path: string) {
    const c = await connectZk(connect, {
      tls: {
        ca: readFileSync(certs.ca),
        cert: readFileSync(certs.client.cert),
        key: readFileSync(certs.client.key),
      },
      sasl: { username: OPS.user, password: OPS.password },
    });
    try {
      return (await c.getAcl(path)).acl;
    } finally {
      await c.close();
    }
  }
  /** The auth scheme's ACL of a session with the ops login and the first client certificate. */
  const both = () =>
    expect.arrayContaining([
      { scheme: 'sasl', id: OPS.user, perms: Perms.ALL },
      { scheme: 'x509', id: certs.client.dn, perms: Perms.ALL },
    ]);
  const ok = (r: RunResult) => expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);

  it('takes every TLS and SASL setting by flag: a sasl world, with an encrypted key', async () => {
    const connect = fresh();
    const flags = [
      '--connect',
      connect,
      '--zk-tls',
      '--zk-tls-ca',
      certs.ca,
      '--zk-tls-cert',
      certs.client.cert,
      '--zk-tls-key',
      certs.encryptedClientKey,
      '--zk-tls-key-passphrase',
      certs.clientKeyPassphrase,
      '--zk-sasl',
      `${OPS.user}:${OPS.password}`,
    ];
    ok(await zoott([...flags, 'init', 'byflag']));
    // A SASL login is a credential: what the CLI creates belongs to it (the auth scheme), and
    // to the client certificate the server mapped to an x509 id beside it.
    expect(await aclOf(connect, '/zoott_byflag')).toEqual(both());
    const status = await zoott([...flags, '--world', 'byflag', '--json', 'status']);
    ok(status);
    expect(json(status).world).toBe('byflag');
    // The same by file: the passphrase and the login each from a file of their own.
    const byFiles = await zoott([
      '--connect',
      connect,
      ...tlsFlags(),
      '--zk-tls-cert',
      certs.client.cert,
      '--zk-tls-key',
      certs.encryptedClientKey,
      '--zk-tls-key-passphrase-file',
      files.passphrase,
      '--zk-sasl-file',
      files.sasl,
      '--world',
      'byflag',
      'status',
    ]);
    ok(byFiles);
  });

  it('takes them from the environment and the config file, flags over both', async () => {
    const connect = fresh();
    const env = {
      ZOOTT_CONNECT: connect,
      ZOOTT_ZK_TLS: 'true',
      ZOOTT_ZK_TLS_CA: certs.ca,
      ZOOTT_ZK_TLS_CERT: certs.client.cert,
      ZOOTT_ZK_TLS_KEY: certs.encryptedClientKey,
      ZOOTT_ZK_TLS_KEY_PASSPHRASE: certs.clientKeyPassphrase,
      ZOOTT_ZK_SASL: `${OPS.user}:${OPS.password}`,
    };
    ok(await zoott(['init', 'byenv'], { env }));
    expect(await aclOf(connect, '/zoott_byenv')).toEqual(both());
    const envFiles = {
      ZOOTT_CONNECT: connect,
      ZOOTT_ZK_TLS_CA: certs.ca,
      ZOOTT_ZK_TLS_CERT: certs.client.cert,
      ZOOTT_ZK_TLS_KEY: certs.encryptedClientKey,
      ZOOTT_ZK_TLS_KEY_PASSPHRASE_FILE: files.passphrase,
      ZOOTT_ZK_SASL_FILE: files.sasl,
      ZOOTT_WORLD: 'byenv',
    };
    ok(await zoott(['status'], { env: envFiles }));

    const cwd = mkdtempSync(join(dir, 'cfg-'));
    writeFileSync(
      join(cwd, 'zoott.config.yaml'),
      [
        `connect: ${connect}`,
        'world: byfile',
        'zkTls: true',
        `zkTlsCa: ${certs.ca}`,
        `zkTlsCert: ${certs.client.cert}`,
        `zkTlsKey: ${certs.encryptedClientKey}`,
        `zkTlsKeyPassphraseFile: ${files.passphrase}`,
        `zkSaslFile: ${files.sasl}`,
        'cli:',
        `  zkTlsKeyPassphrase: not-the-passphrase`,
        '',
      ].join('\n'),
    );
    // Both passphrases from the file: refused, naming the file's keys.
    const twice = await zoott(['status'], { cwd });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/zkTlsKeyPassphraseFile: give the key passphrase once/);
    // A flag wins over the file: the file's passphrase file is then the second source.
    writeFileSync(
      join(cwd, 'zoott.config.yaml'),
      readFileSync(join(cwd, 'zoott.config.yaml'), 'utf8').replace(/cli:\n.*\n/, ''),
    );
    ok(await zoott(['init', 'byfile'], { cwd }));
    expect(await aclOf(connect, '/zoott_byfile')).toEqual(both());
    const flagOverFile = await zoott(['--zk-sasl-file', files.badSasl, 'status'], { cwd });
    expect(flagOverFile.code).toBe(4);
    expect(flagOverFile.stderr).toMatch(
      /SASL DIGEST-MD5 as "ops": the server refused the user or password/,
    );
    expect(flagOverFile.stderr).not.toContain('not-the-password');
  });

  it('an x509 world: init --acl, strangers refused naming the scheme, doctor and lock-down', async () => {
    const connect = fresh();
    const acl = `x509:${certs.client.dn}:cdrwa`;
    const me = ['--connect', connect, ...tlsFlags('client'), '--world', 'xw'];
    ok(await zoott([...me, '--acl', acl, 'init', 'xw']));
    expect(await aclOf(connect, '/zoott_xw')).toEqual([
      { scheme: 'x509', id: certs.client.dn, perms: Perms.ALL },
    ]);
    // Queued without --acl: the certificate's own (it is a credential), like the world.
    ok(await zoott([...me, 'queue', 'a', '--type', 't']));
    expect(await aclOf(connect, '/zoott_xw/a')).toEqual([
      { scheme: 'x509', id: certs.client.dn, perms: Perms.ALL },
    ]);
    // Another certificate, and none at all: NO_AUTH (exit 4) naming who the session is.
    const other = await zoott([
      '--connect',
      connect,
      ...tlsFlags('otherClient'),
      '--world',
      'xw',
      'show',
      'a',
    ]);
    expect(other.code).toBe(4);
    expect(other.stderr).toContain(`this session is x509:${certs.otherClient.dn}`);
    expect(other.stderr).toMatch(/x509 entry names \(--zk-tls-cert/);
    const none = await zoott(['--connect', connect, ...tlsFlags(), '--world', 'xw', 'show', 'a']);
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('this session has no identity');
    // doctor holds the world to the --acl given: nothing weak.
    const doctor = await zoott([...me, '--acl', acl, '--json', 'doctor', 'xw']);
    ok(doctor);
    expect(JSON.stringify(json(doctor))).not.toMatch(/weak-acl/);

    // An open world locked down to a certificate afterwards, through ZOOTT_ACL (commas and all).
    // A client certificate is a credential: its worlds are its own unless told `--acl open`.
    ok(await zoott(['--connect', connect, ...tlsFlags('client'), '--acl', 'open', 'init', 'open']));
    expect(await aclOf(connect, '/zoott_open')).toEqual([
      { scheme: 'world', id: 'anyone', perms: Perms.ALL },
    ]);
    const weak = await zoott([...me, '--acl', acl, '--json', 'doctor', 'open']);
    expect(JSON.stringify(json(weak))).toMatch(/weak-acl/);
    const refusedInit = await zoott([...me, '--acl', acl, 'init', 'open']);
    expect(refusedInit.code).toBe(4);
    expect(refusedInit.stderr).toContain(`x509:${certs.client.dn} cdrwa`);
    const locked = await zoott(['--connect', connect, ...tlsFlags('client'), 'lock-down', 'open'], {
      env: { ZOOTT_ACL: acl },
    });
    ok(locked);
    expect(locked.stdout).toContain(`locked to x509:${certs.client.dn} cdrwa`);
    expect(await aclOf(connect, '/zoott_open')).toEqual([
      { scheme: 'x509', id: certs.client.dn, perms: Perms.ALL },
    ]);
    const after = await zoott([
      '--connect',
      connect,
      ...tlsFlags('otherClient'),
      '--world',
      'open',
      'status',
    ]);
    expect(after.code).toBe(4);
  });

  it('a sasl world refuses another SASL user, and lock-down takes --acl sasl:<user>', async () => {
    const connect = fresh();
    const ops = ['--connect', connect, ...tlsFlags(), '--zk-sasl-file', files.sasl];
    ok(await zoott([...ops, 'init', 'sw']));
    const dev = await zoott(['--connect', connect, ...tlsFlags(), '--world', 'sw', 'status'], {
      env: { ZOOTT_ZK_SASL: 'dev:dev-secret' },
    });
    expect(dev.code).toBe(4);
    expect(dev.stderr).toContain('this session is sasl:dev');
    // Opened to dev by an explicit ACL of both.
    ok(await zoott([...ops, '--acl', 'sasl:ops:cdrwa', '--acl', 'sasl:dev:r', 'lock-down', 'sw']));
    const devReads = await zoott(['--connect', connect, ...tlsFlags(), '--world', 'sw', 'status'], {
      env: { ZOOTT_ZK_SASL: 'dev:dev-secret' },
    });
    ok(devReads);
  });

  it('without --acl, init and lock-down hold a world to what the session is: its certificate, its login', async () => {
    const connect = fresh();
    const certificate = ['--connect', connect, ...tlsFlags('client')];
    const login = ['--connect', connect, ...tlsFlags(), '--zk-sasl-file', files.sasl];
    ok(await zoott([...certificate, '--acl', 'open', 'init', 'mine']));
    // An open world is not theirs: init says so (exit 4) naming the ACL it expected.
    const byCertificate = await zoott([...certificate, 'init', 'mine']);
    expect(byCertificate.code, byCertificate.stderr).toBe(4);
    expect(byCertificate.stderr).toContain(`not locked to these credentials`);
    expect(byCertificate.stderr).toContain(`x509:${certs.client.dn} cdrwa`);
    const byLogin = await zoott([...login, 'init', 'mine']);
    expect(byLogin.code, byLogin.stderr).toBe(4);
    expect(byLogin.stderr).toContain(`sasl:${OPS.user} cdrwa`);
    // lock-down with the certificate alone makes the world the certificate's.
    const locked = await zoott([...certificate, 'lock-down', 'mine']);
    ok(locked);
    expect(await aclOf(connect, '/zoott_mine')).toEqual([
      { scheme: 'x509', id: certs.client.dn, perms: Perms.ALL },
    ]);
    ok(await zoott([...certificate, 'init', 'mine']));
  });

  describe('a connect that cannot work exits 3 at once, saying which', () => {
    /** Runs `status` with a connect timeout of an hour: exiting at all proves it did not wait. */
    const fails = async (args: string[]) => {
      const r = await start(['--connect-timeout', NEVER, ...args, 'status']).exited;
      expect(r.code, r.stderr).toBe(3);
      return r.stderr;
    };

    it('a bad CA', async () => {
      const err = await fails(['--connect', zk.secureConnectString, '--zk-tls-ca', certs.otherCa]);
      expect(err).toMatch(/certificate is not signed by a trusted CA/);
      expect(err).toMatch(/hint: give the CA that signed the servers' certificates: --zk-tls-ca/);
    });

    it('an expired certificate', async () => {
      const err = await fails(['--connect', expired.secureConnectString, ...tlsFlags()]);
      expect(err).toMatch(/certificate has expired/);
    });

    it('a certificate for another host; --zk-tls-skip-hostname-check accepts it', async () => {
      const err = await fails(['--connect', wrongHost.secureConnectString, ...tlsFlags()]);
      expect(err).toMatch(/certificate is not for 127\.0\.0\.1 \(it names DNS:zk\.invalid\)/);
      expect(err).toMatch(/--zk-tls-skip-hostname-check/);
      const skipped = await zoott([
        '--connect',
        wrongHost.secureConnectString,
        ...tlsFlags(),
        '--zk-tls-skip-hostname-check',
        'worlds',
      ]);
      ok(skipped);
    });

    it('a TLS client on the plain port', async () => {
      const err = await fails(['--connect', zk.connectString, ...tlsFlags()]);
      expect(err).toMatch(/speaks plain ZooKeeper, not TLS/);
    });

    it('a plain client on the TLS port', async () => {
      const err = await fails(['--connect', zk.secureConnectString]);
      expect(err).toMatch(/expects TLS \(a secureClientPort\)/);
    });
  });

  it('refuses unreadable files and half-given settings before connecting, naming the setting (exit 2)', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [
        ['--zk-tls-ca', join(dir, 'missing.pem')],
        {},
        /--zk-tls-ca: cannot read .*missing\.pem \(ENOENT\)/,
      ],
      [
        ['--zk-tls-cert', certs.client.cert],
        {},
        /--zk-tls-cert: a client certificate and its key go together/,
      ],
      [[], { ZOOTT_ZK_SASL: 'ops' }, /ZOOTT_ZK_SASL: expected user:password/],
      [['--zk-tls-key-passphrase-file', files.passphrase], {}, /TLS is off/],
      [[...tlsFlags(), '--zk-tls', '--acl', 'x509:CN=a:q'], {}, /--acl\[0\]: the permissions "q"/],
    ];
    for (const [args, env, message] of cases) {
      const r = await zoott(['--connect', zk.secureConnectString, ...args, 'status'], { env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
