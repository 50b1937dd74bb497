import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
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
import {
  assertBuilt,
  json,
  type RunResult,
  spawnWatched,
  start,
  until,
  WORKER_BIN,
  zoott,
} from './helpers.js';

// zoott-worker, the dashboard and the demo's worker processes on a secured ZooKeeper (TLS
// with a client certificate, and a SASL login), given the shared settings by environment:
// a JSON job goes from the CLI through a worker and back; and the worker's start refuses what
// cannot work with the CLI's exit codes.

const URL_LINE = /(http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/;

describe('programs on a secured ZooKeeper', { timeout: 240_000 }, () => {
  let dir: string;
  let certs: ZkTestCertificates;
  let zk: ZooKeeperServer & { secureConnectString: string };
  /** The shared settings, as every program reads them from the environment. */
  let env: Record<string, string>;

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'zoott-secured-programs-'));
    certs = makeZkTestCertificates(join(dir, 'certs'));
    zk = (await startZooKeeper({
      heapMb: 128,
      security: { tls: serverTls(certs), sasl: { users: { ops: 'ops-secret' } } },
    })) as typeof zk;
    const login = join(dir, 'login');
    writeFileSync(login, 'ops:ops-secret\n', { mode: 0o600 });
    env = {
      ZOOTT_ZK_TLS_CA: certs.ca,
      ZOOTT_ZK_TLS_CERT: certs.client.cert,
      ZOOTT_ZK_TLS_KEY: certs.client.key,
      ZOOTT_ZK_SASL_FILE: login,
    };
  });
  afterAll(async () => {
    await zk?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const ok = (r: RunResult) => expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  const worker = (connect: string, extraEnv: Record<string, string> = {}, base = env) =>
    spawnWatched(
      process.execPath,
      [
        WORKER_BIN,
        '--world',
        'jobs',
        '--create-world',
        '--allow-exec',
        '/usr/bin/*',
        '--run-as',
        userInfo().username,
        '--log-level',
        'info',
      ],
      { env: { ...base, ZOOTT_CONNECT: connect, ...extraEnv } },
    );

  it('a worker serves a JSON job the CLI submits; the dashboard shows the world', async () => {
    const connect = `${zk.secureConnectString}/programs`;
    const w = worker(connect);
    await until(() => /worker started/.test(w.out()), 'the worker to start', 60_000);
    const job = join(dir, 'job.json');
    writeFileSync(
      job,
      JSON.stringify({ executable: '/usr/bin/echo', arguments: ['over tls and sasl'] }),
    );
    // The worker made the world (--create-world) with its login and certificate: theirs.
    const c = await connectZk(connect, {
      tls: {
        ca: readFileSync(certs.ca),
        cert: readFileSync(certs.client.cert),
        key: readFileSync(certs.client.key),
      },
      sasl: { username: 'ops', password: 'ops-secret' },
    });
    try {
      const { acl } = await c.getAcl('/zoott_jobs');
      expect(acl).toHaveLength(2);
      expect(acl).toEqual(
        expect.arrayContaining([
          { scheme: 'sasl', id: 'ops', perms: Perms.ALL },
          { scheme: 'x509', id: certs.client.dn, perms: Perms.ALL },
        ]),
      );
    } finally {
      await c.close();
    }
    const submitted = await zoott(
      ['--connect', connect, '--world', 'jobs', 'submit', job, '--wait'],
      {
        env,
        timeoutMs: 120_000,
      },
    );
    ok(submitted);
    expect(submitted.stdout).toContain('over tls and sasl');

    const dashboard = start(['--connect', connect, 'dashboard', '--world', 'jobs', '--port', '0'], {
      env,
    });
    await until(() => URL_LINE.test(dashboard.err()), 'the dashboard URL', 60_000);
    const [, url, token] = dashboard.err().match(URL_LINE)!;
    const counts = (await (await fetch(`${url}/api/counts?world=jobs&token=${token}`)).json()) as {
      completed: number;
    };
    expect(counts.completed).toBe(1);
    dashboard.kill('SIGINT');
    expect((await dashboard.exited).code).toBe(130);
    w.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
  });

  it("a worker with a client certificate alone makes its world the certificate's", async () => {
    const connect = `${zk.secureConnectString}/certificate`;
    const { ZOOTT_ZK_SASL_FILE: _login, ...certificateOnly } = env;
    const w = worker(connect, {}, certificateOnly);
    await until(() => /worker started/.test(w.out()), 'the worker to start', 60_000);
    const ca = readFileSync(certs.ca);
    const owner = await connectZk(connect, {
      tls: { ca, cert: readFileSync(certs.client.cert), key: readFileSync(certs.client.key) },
    });
    const stranger = await connectZk(connect, { tls: { ca } });
    try {
      // The certificate is a credential: the world is its x509 id's, not open.
      expect((await owner.getAcl('/zoott_jobs')).acl).toEqual([
        { scheme: 'x509', id: certs.client.dn, perms: Perms.ALL },
      ]);
      await expect(stranger.children('/zoott_jobs')).rejects.toMatchObject({ code: 'NO_AUTH' });
    } finally {
      await Promise.allSettled([owner.close(), stranger.close()]);
    }
    w.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
  });

  it("a worker with a SASL login alone makes its world the login's", async () => {
    const connect = `${zk.secureConnectString}/login`;
    const { ZOOTT_ZK_TLS_CERT: _cert, ZOOTT_ZK_TLS_KEY: _key, ...loginOnly } = env;
    const w = worker(connect, {}, loginOnly);
    await until(() => /worker started/.test(w.out()), 'the worker to start', 60_000);
    const tls = { ca: readFileSync(certs.ca) };
    const owner = await connectZk(connect, {
      tls,
      sasl: { username: 'ops', password: 'ops-secret' },
    });
    const stranger = await connectZk(connect, { tls });
    try {
      // The login is a credential: the world is its sasl id's, not open.
      expect((await owner.getAcl('/zoott_jobs')).acl).toEqual([
        { scheme: 'sasl', id: 'ops', perms: Perms.ALL },
      ]);
      await expect(stranger.children('/zoott_jobs')).rejects.toMatchObject({ code: 'NO_AUTH' });
    } finally {
      await Promise.allSettled([owner.close(), stranger.close()]);
    }
    w.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
  });

  it('the demo hands the settings given by flag to its worker processes', async () => {
    const r = await zoott(
      [
        '--connect',
        `${zk.secureConnectString}/demo`,
        '--zk-tls-ca',
        certs.ca,
        '--zk-tls-cert',
        certs.client.cert,
        '--zk-tls-key',
        certs.client.key,
        '--zk-sasl-file',
        env.ZOOTT_ZK_SASL_FILE!,
        '--json',
        'demo',
        '--items',
        '2',
        '--workers',
        '1',
      ],
      { timeoutMs: 180_000 },
    );
    ok(r);
    expect(json<{ embedded: boolean; completed: number }>(r)).toMatchObject({ embedded: false });
  });

  it('the worker refuses at start what cannot work: exit 3 for TLS, 4 for a refused login, 2 for a missing file', async () => {
    const plain = worker(zk.secureConnectString, {
      ZOOTT_ZK_TLS_CA: '',
      ZOOTT_ZK_TLS_CERT: '',
      ZOOTT_ZK_TLS_KEY: '',
    });
    const plainExit = await plain.exited;
    expect(plainExit.code, plainExit.stderr).toBe(3);
    expect(plainExit.stderr).toMatch(/expects TLS \(a secureClientPort\)/);
    expect(plainExit.stderr).toMatch(/hint: a secureClientPort takes TLS \(--zk-tls/);

    const badCa = worker(zk.secureConnectString, { ZOOTT_ZK_TLS_CA: certs.otherCa });
    const badCaExit = await badCa.exited;
    expect(badCaExit.code, badCaExit.stderr).toBe(3);
    expect(badCaExit.stderr).toMatch(/not signed by a trusted CA/);

    const wrong = join(dir, 'wrong-login');
    writeFileSync(wrong, 'ops:not-it\n');
    const refused = await worker(zk.secureConnectString, { ZOOTT_ZK_SASL_FILE: wrong }).exited;
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toMatch(
      /SASL DIGEST-MD5 as "ops": the server refused the user or password/,
    );
    expect(refused.stderr).toMatch(/hint: check the SASL login/);

    const missing = await worker(zk.secureConnectString, { ZOOTT_ZK_TLS_CA: join(dir, 'nope.pem') })
      .exited;
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toMatch(/ZOOTT_ZK_TLS_CA: cannot read .*nope\.pem \(ENOENT\)/);
  });
});
