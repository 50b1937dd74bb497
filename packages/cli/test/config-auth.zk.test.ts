import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, json, start, zoott } from './helpers.js';

// The configuration story shared with zoott-worker, from the outside: one config file with
// a cli: section, credentials off the command line, and refused hosts failing fast.
const SLOW = 120_000;

/**
 * A port on 127.0.0.1 that refuses connections. Below 1024, outside the range the system
 * hands out for port 0: a free port picked that way could be taken again, between the pick
 * and the connect, by any server a concurrent test starts (ZooKeeper test servers pick theirs
 * so), and the CLI would then reach a real server. Checked first: a port something listens
 * on fails the test here, saying so.
 */
async function refusedPort(port: number): Promise<number> {
  const refused = await new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
  if (!refused) throw new Error(`127.0.0.1:${port} does not refuse connections on this machine`);
  return port;
}

describe('zoott configuration and credentials', { timeout: SLOW }, () => {
  let tmp: string;
  beforeAll(() => {
    assertBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'zoott-cfg-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('reads the file shared with the worker: top-level keys, its cli: section, skips worker:', async () => {
    const connect = await freshConnect();
    const dir = mkdtempSync(join(tmp, 'shared-'));
    writeFileSync(
      join(dir, 'zoott.config.yaml'),
      [
        `connect: ${connect}`,
        'world: shared',
        'cli:',
        '  world: mine',
        '  connectTimeoutMs: 5000',
        'worker:',
        '  world: theirs',
        '  concurrency: 4',
        '  allowExec: [/bin/true]',
        '',
      ].join('\n'),
    );
    expect((await zoott(['init', 'mine'], { cwd: dir })).code).toBe(0);
    const status = await zoott(['--json', 'status'], { cwd: dir });
    expect(status.code, status.stderr).toBe(0);
    expect(json(status).world).toBe('mine');

    writeFileSync(join(dir, 'zoott.config.yaml'), `connect: ${connect}\ncli:\n  wrld: x\n`);
    const typo = await zoott(['status'], { cwd: dir });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/cli\.wrld: unknown cli setting/);
  });

  it('takes credentials from --auth-file and ZOOTT_AUTH, digest:user:password too', async () => {
    const connect = await freshConnect();
    const authFile = join(tmp, 'auth');
    writeFileSync(authFile, '# ops\ndigest:carol:s3:cret\n', { mode: 0o600 });
    // init with credentials locks the world to them (ZooKeeper's auth scheme).
    const init = await zoott(['--connect', connect, '--auth-file', authFile, 'init', 'locked']);
    expect(init.code, init.stderr).toBe(0);
    const queued = await zoott(
      ['--connect', connect, '--world', 'locked', 'queue', 'a', '-t', 't'],
      {
        env: { ZOOTT_AUTH: 'carol:s3:cret' },
      },
    );
    expect(queued.code, queued.stderr).toBe(0);
    const denied = await zoott(['--connect', connect, '--world', 'locked', 'show', 'a'], {
      env: { ZOOTT_AUTH: 'carol:wrong' },
    });
    expect(denied.code).toBe(4);
    expect(denied.stderr).not.toContain('wrong');
    const viaSpelt = await zoott([
      '--connect',
      connect,
      '--world',
      'locked',
      '--auth',
      'digest:carol:s3:cret',
      '--json',
      'show',
      'a',
    ]);
    expect(viaSpelt.code, viaSpelt.stderr).toBe(0);
    const bad = await zoott(['--connect', connect, '--auth', 'nocolon', 'status']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected user:password or digest:user:password/);
  });

  it('exits 3 as soon as every host has refused, naming the hosts (no wait for the connect timeout)', async () => {
    const [a, b] = [await refusedPort(1), await refusedPort(9)];
    // The connect timeout is far longer than the test may run: an exit at all proves the
    // refusals ended the attempt, and the message says which path was taken. No clock is
    // read: a loaded machine may take seconds to start Node, which says nothing about zoott.
    const child = start([
      '--connect',
      `127.0.0.1:${a},127.0.0.1:${b}`,
      '--connect-timeout',
      '1h',
      'status',
    ]);
    const r = await child.exited;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`127.0.0.1:${a} (ECONNREFUSED)`);
    expect(r.stderr).toContain(`127.0.0.1:${b} (ECONNREFUSED)`);
    expect(r.stderr).toMatch(/every server refused/);
    expect(r.stderr).not.toMatch(/no answer within/);
  });
});
