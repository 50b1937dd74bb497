/**
 * `zoott` trusts a config or auth file the way ssh trusts its own: owned by the user running it
 * or root, writable by nobody else, and, holding credentials, readable by nobody else; where
 * the file was found lifts none of it. The built binary, as root, with a second user made for
 * the test (and removed after) who drops a config file naming its own "ZooKeeper": a proxy in
 * front of the real one that records what the CLI sends it.
 */
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSystemUser, type SystemUser } from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, freshConnect, zoott } from './helpers.js';

const SECRET = 'ops:pa55-for-the-real-server';

describe('files zoott trusts', { timeout: 120_000 }, () => {
  let user: SystemUser;
  let tmp: string;
  let proxy: Server;
  let proxyPort = 0;
  let heard = '';

  beforeAll(async () => {
    assertBuilt();
    user = makeSystemUser('zoott-t-trust');
    tmp = mkdtempSync(join(tmpdir(), 'zoott-trust-'));
    // Anyone may drop files here (as in /tmp): the other user's config file lands in it.
    chmodSync(tmp, 0o1777);
    const [host, port] = inject('zkConnect').split(':');
    proxy = createServer((client) => {
      const server = tcpConnect(Number(port), host);
      client.on('data', (b) => {
        heard += b.toString('latin1');
        server.write(b);
      });
      server.pipe(client);
      client.on('error', () => server.destroy());
      server.on('error', () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxyPort = (proxy.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => proxy?.close(r));
    rmSync(tmp, { recursive: true, force: true });
    user?.remove();
  });

  /** A file in the shared directory, written as root and then given to `owner` with `mode`. */
  function plant(name: string, text: string, owner: number, mode: number): string {
    const path = join(tmp, name);
    writeFileSync(path, text);
    chownSync(path, owner, owner === 0 ? 0 : user.gid);
    chmodSync(path, mode);
    return path;
  }

  it("another user's zoott.config.yaml in the working directory is refused: the password goes nowhere", async () => {
    const dir = mkdtempSync(join(tmp, 'cwd-'));
    chmodSync(dir, 0o1777);
    const file = join(dir, 'zoott.config.yaml');
    writeFileSync(file, `connect: 127.0.0.1:${proxyPort}\n`);
    chownSync(file, user.uid, user.gid);
    heard = '';
    const r = await zoott(['status'], { cwd: dir, env: { ZOOTT_AUTH: SECRET } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `refusing config file ${file} is owned by ${user.name} (uid ${user.uid}), mode 0644`,
    );
    expect(r.stderr).toMatch(/only a file owned by you \(root \(uid 0\)\) or root is trusted/);
    expect(r.stderr).toContain(`chown 0 ${file}`);
    expect(heard).toBe('');
    // The control: the same file, root's, is used, and the server it names gets the password.
    chownSync(file, 0, 0);
    await zoott(['status'], { cwd: dir, env: { ZOOTT_AUTH: SECRET } });
    expect(heard).toContain(SECRET);
  });

  it('--config and ZOOTT_CONFIG naming such a file are refused too', async () => {
    const file = plant('theirs.yaml', `connect: 127.0.0.1:${proxyPort}\n`, user.uid, 0o644);
    heard = '';
    for (const how of [{ args: ['--config', file] }, { env: { ZOOTT_CONFIG: file } }]) {
      const r = await zoott([...(how.args ?? []), 'status'], {
        env: { ZOOTT_AUTH: SECRET, ...how.env },
      });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`refusing config file ${file} is owned by ${user.name}`);
    }
    expect(heard).toBe('');
  });

  it('a config file others may write, or one with credentials others may read, is refused', async () => {
    const connect = await freshConnect();
    const writable = plant('writable.yaml', `connect: ${connect}\n`, 0, 0o666);
    let r = await zoott(['--config', writable, 'status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `config file ${writable} is owned by root (uid 0), mode 0666: writable by its group and others`,
    );
    expect(r.stderr).toContain(`chmod go-w ${writable}`);

    const readable = plant('readable.yaml', `connect: ${connect}\nauth: ${SECRET}\n`, 0, 0o640);
    r = await zoott(['--config', readable, 'status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `config file ${readable} is owned by root (uid 0), mode 0640: it holds credentials`,
    );
    expect(r.stderr).toContain(`chmod 600 ${readable}`);

    // The same file, private, is used; one without credentials may be read by all.
    chmodSync(readable, 0o600);
    const init = await zoott(['--config', readable, 'init', 'trusted']);
    expect(init.code, init.stderr).toBe(0);
    const open = plant('open.yaml', `connect: ${await freshConnect()}\n`, 0, 0o644);
    const worlds = await zoott(['--config', open, 'worlds']);
    expect(worlds.code, worlds.stderr).toBe(0);
  });

  it('an auth file others may read is refused, and so is one of another user', async () => {
    const connect = await freshConnect();
    const readable = plant('auth-readable', `${SECRET}\n`, 0, 0o644);
    let r = await zoott(['--connect', connect, '--auth-file', readable, 'status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `auth file ${readable} is owned by root (uid 0), mode 0644: it holds credentials`,
    );
    r = await zoott(['--connect', connect, 'status'], { env: { ZOOTT_AUTH_FILE: readable } });
    expect(r.code).toBe(2);
    const theirs = plant('auth-theirs', `${SECRET}\n`, user.uid, 0o600);
    r = await zoott(['--connect', connect, '--auth-file', theirs, 'status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `auth file ${theirs} is owned by ${user.name} (uid ${user.uid}), mode 0600`,
    );
  });
});
