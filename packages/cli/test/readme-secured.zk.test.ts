import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Perms } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import {
  freePort,
  keytoolBinary,
  makeZkTestCertificates,
  opensslBinary,
  startZooKeeper,
  type ZkTestCertificates,
  type ZooKeeperServer,
} from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, json, type RunResult, zoott } from './helpers.js';

// The README's "Secured ZooKeeper" examples, run as written: its commands make the server's
// stores, a ZooKeeper starts with each of its zoo.cfg blocks (and the JAAS file and JVM flag),
// and `zoott` runs with each of its zoott.config.yaml blocks. Only what names this machine
// is replaced: the paths of the files, the host and the port.

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** The block (or inline code) after `<!-- secured-example: <name> -->` in the README. */
function example(name: string): string {
  const text = readFileSync(README, 'utf8');
  const marker = `<!-- secured-example: ${name} -->`;
  const at = text.indexOf(marker);
  if (at === -1) throw new Error(`README has no ${marker}`);
  const rest = text.slice(at + marker.length);
  const fence = /^\s*```\w*\n([\s\S]*?)\n```/.exec(rest);
  if (fence) return fence[1]!;
  const inline = /^\s*`([^`]+)`/.exec(rest);
  if (inline) return inline[1]!;
  throw new Error(`no code after ${marker}`);
}

/** The sh block that makes the stores: the one fence of the section in `sh`, before the first example. */
function storeCommands(): string {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('## Secured ZooKeeper'));
  const fence = /```sh\n([\s\S]*?)\n```/.exec(section);
  if (!fence) throw new Error('README Secured ZooKeeper: no sh block making the stores');
  return fence[1]!;
}

describe("the README's Secured ZooKeeper examples, as written", { timeout: 180_000 }, () => {
  let dir: string;
  let certs: ZkTestCertificates;
  let etc: { zookeeper: string; zoott: string };
  const servers: ZooKeeperServer[] = [];

  /** Paths and addresses of the README, made this machine's. */
  let local: (text: string, ports?: { secure?: number; plain?: number }) => string;

  beforeAll(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'zoott-readme-secured-'));
    certs = makeZkTestCertificates(join(dir, 'certs'));
    etc = { zookeeper: join(dir, 'etc-zookeeper'), zoott: join(dir, 'etc-zoott') };
    mkdirSync(join(etc.zookeeper, 'tls'), { recursive: true });
    mkdirSync(etc.zoott, { recursive: true });
    // The README's client certificate: CN=ops,O=example, by the test CA, its key encrypted.
    const openssl = opensslBinary();
    const run = (args: string[]) => execFileSync(openssl, args, { cwd: certs.dir, stdio: 'pipe' });
    run(
      ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat(
        ['-keyout', 'ops-plain.key', '-out', 'ops.csr', '-subj', '/O=example/CN=ops'],
      ),
    );
    writeFileSync(join(certs.dir, 'ops.ext'), 'extendedKeyUsage=clientAuth\n');
    run(
      [
        'x509',
        '-req',
        '-in',
        'ops.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
      ].concat(['-days', '2', '-out', join(etc.zoott, 'ops.pem'), '-extfile', 'ops.ext']),
    );
    run(
      ['pkcs8', '-topk8', '-in', 'ops-plain.key', '-out', join(etc.zoott, 'ops.key')].concat([
        '-v2',
        'aes-256-cbc',
        '-passout',
        'pass:ops key pass',
      ]),
    );
    writeFileSync(join(etc.zoott, 'ops.key.pass'), 'ops key pass\n');
    writeFileSync(join(etc.zoott, 'zk-ca.pem'), readFileSync(certs.ca));
    writeFileSync(join(etc.zoott, 'zk-sasl'), 'zoott:zoott-secret\n', { mode: 0o600 });
    // The README's own commands make the server's stores from the test CA's server files.
    for (const f of ['server.pem', 'server.key', 'ca.pem'])
      writeFileSync(join(dir, f), readFileSync(join(certs.dir, f)));
    const commands = storeCommands()
      .replaceAll('/etc/zookeeper/', `${etc.zookeeper}/`)
      .replace(/^keytool /m, `${keytoolBinary()} `)
      .replace(/^openssl /m, `${openssl} `);
    execFileSync('/bin/sh', ['-c', commands], { cwd: dir, stdio: 'pipe' });
    local = (text, ports = {}) =>
      text
        .replaceAll('/etc/zookeeper/', `${etc.zookeeper}/`)
        .replaceAll('/etc/zoott/', `${etc.zoott}/`)
        .replaceAll('zk1.example.com', '127.0.0.1')
        .replace(/\b2281\b/g, String(ports.secure ?? 2281))
        .replace(/\b2181\b/g, String(ports.plain ?? 2181));
  });
  afterAll(async () => {
    await Promise.allSettled(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** A ZooKeeper with the README's zoo.cfg block `name` (secure port a free one). */
  async function server(name: string, jvmFlags: string[] = []) {
    const secure = await freePort();
    const config = local(example(`${name} zoo.cfg`), { secure }).split('\n');
    const zk = await startZooKeeper({
      heapMb: 128,
      // Bound to this machine alone, as the testkit's own ports are.
      config: config.some((l) => l.startsWith('secureClientPort='))
        ? [...config, 'secureClientPortAddress=127.0.0.1']
        : config,
      jvmFlags,
    });
    servers.push(zk);
    return { zk, secure };
  }

  /** `zoott <args>` in a folder holding the README's zoott.config.yaml block `name`. */
  function withConfig(name: string, ports: { secure?: number; plain?: number }) {
    const cwd = mkdtempSync(join(dir, `${name}-`));
    writeFileSync(
      join(cwd, 'zoott.config.yaml'),
      local(example(`${name} zoott.config.yaml`), ports),
      // As the README keeps it: private (a config file that sets `acl` must be).
      { mode: 0o600 },
    );
    return (args: string[], env: Record<string, string> = {}) => zoott(args, { cwd, env });
  }

  const ok = (r: RunResult) => expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  async function aclOf(connect: string, path: string, options: Parameters<typeof connectZk>[1]) {
    const c = await connectZk(connect, options);
    try {
      return (await c.getAcl(path)).acl;
    } finally {
      await c.close();
    }
  }

  it('TLS: the server certificate checked against the CA, the world open to TLS clients', async () => {
    const { secure, zk } = await server('tls');
    const z = withConfig('tls', { secure, plain: Number(zk.connectString.split(':')[1]) });
    ok(await z(['init', 'files']));
    const status = await z(['--world', 'files', '--json', 'status']);
    ok(status);
    expect(json(status).world).toBe('files');
    // Without the CA the same server is refused at once, saying why.
    const noCa = await z(['--zk-tls-ca', certs.otherCa, 'status']);
    expect(noCa.code).toBe(3);
    expect(noCa.stderr).toMatch(/not signed by a trusted CA/);
  });

  it('mutual TLS: the world is the certificate CN=ops,O=example alone', async () => {
    const { secure } = await server('mtls');
    const z = withConfig('mtls', { secure });
    ok(await z(['init', 'files']));
    ok(await z(['--world', 'files', 'queue', 'a', '--type', 't']));
    const ca = readFileSync(certs.ca);
    const acl = await aclOf(`127.0.0.1:${secure}/myapp`, '/zoott_files/a', {
      tls: {
        ca,
        cert: readFileSync(join(etc.zoott, 'ops.pem')),
        key: readFileSync(join(etc.zoott, 'ops.key')),
        passphrase: 'ops key pass',
      },
    });
    expect(acl).toEqual([{ scheme: 'x509', id: 'CN=ops,O=example', perms: Perms.ALL }]);
    // Another certificate: refused (exit 4) naming the scheme; none at all: the server
    // requires one (exit 3).
    const stranger = await zoott([
      '--connect',
      `127.0.0.1:${secure}/myapp`,
      '--zk-tls-ca',
      certs.ca,
      '--zk-tls-cert',
      certs.otherClient.cert,
      '--zk-tls-key',
      certs.otherClient.key,
      '--world',
      'files',
      'show',
      'a',
    ]);
    expect(stranger.code, stranger.stderr).toBe(4);
    expect(stranger.stderr).toContain(`this session is x509:${certs.otherClient.dn}`);
    const none = await zoott([
      '--connect',
      `127.0.0.1:${secure}/myapp`,
      '--zk-tls-ca',
      certs.ca,
      'status',
    ]);
    expect(none.code, none.stderr).toBe(3);
    expect(none.stderr).toMatch(/wants a client certificate it trusts/);
  });

  it('SASL DIGEST-MD5: the JAAS user logs in, the world is sasl:zoott', async () => {
    const jaas = join(etc.zookeeper, 'jaas.conf');
    writeFileSync(jaas, example('sasl jaas.conf'));
    const flag = local(example('sasl jvm')).replace(/^SERVER_JVMFLAGS="(.*)"$/, '$1');
    const { zk } = await server('sasl', [flag]);
    const plain = Number(zk.connectString.split(':')[1]);
    const z = withConfig('sasl', { plain });
    ok(await z(['init', 'files']));
    const acl = await aclOf(`127.0.0.1:${plain}/myapp`, '/zoott_files', {
      sasl: { username: 'zoott', password: 'zoott-secret' },
    });
    expect(acl).toEqual([{ scheme: 'sasl', id: 'zoott', perms: Perms.ALL }]);
    // The server refuses sessions that did not log in (enforce.auth).
    const anonymous = await zoott(['--connect', `127.0.0.1:${plain}/myapp`, 'status']);
    expect(anonymous.code, anonymous.stderr).toBe(4);
    expect(anonymous.stderr).toMatch(/logged in with SASL/);
    expect(anonymous.stderr).toMatch(/hint: check the SASL login/);
  });
});
