/**
 * A root zoott-worker trusts a config file, an auth file or a handlers module the way ssh
 * trusts its own (owned by root, here, writable by nobody else, credentials readable by
 * nobody else), wherever it was found. The built binary, with a second user made for the test
 * (and removed after) who drops a config file and a handlers module where the worker starts.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSystemUser, type SystemUser } from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { requireBin, startWorker } from './worker-bin.js';

describe('files a root worker trusts', { timeout: 120_000 }, () => {
  let user: SystemUser;
  let tmp: string;
  let marker: string;

  /** A handlers module that leaves a mark when it is imported (its code ran, as root). */
  const evil = () =>
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport function evil() {}\n`;

  beforeAll(() => {
    requireBin();
    user = makeSystemUser('zoott-t-wtrust');
    tmp = mkdtempSync(join(tmpdir(), 'zoott-wtrust-'));
    chmodSync(tmp, 0o755);
    marker = join(tmp, 'handlers-ran');
  });
  afterAll(() => {
    rmSync(tmp, { recursive: true, force: true });
    user?.remove();
  });

  /** Writes a file as root, then gives it to `uid` with `mode`. */
  function plant(path: string, text: string, uid: number, mode: number): string {
    writeFileSync(path, text);
    chownSync(path, uid, uid === 0 ? 0 : user.gid);
    chmodSync(path, mode);
    return path;
  }

  async function refused(args: string[], cwd?: string): Promise<string> {
    const w = startWorker(['--connect', inject('zkConnect'), ...args], cwd ? { cwd } : {});
    const exit = await w.exited;
    expect(exit.code, w.output()).toBe(2);
    return w.output();
  }

  it("another user's zoott.config.yaml where the worker starts is refused, and its handlers never load", async () => {
    // The other user's directory (a home, a shared checkout): root starts the worker there.
    const dir = join(tmp, 'theirs');
    mkdirSync(dir);
    chownSync(dir, user.uid, user.gid);
    const config = plant(
      join(dir, 'zoott.config.yaml'),
      'worker:\n  handlers: ./evil.mjs\n',
      user.uid,
      0o644,
    );
    plant(join(dir, 'evil.mjs'), evil(), user.uid, 0o644);
    const out = await refused(['--world', 'trust'], dir);
    expect(out).toContain(
      `refusing config file ${config} is owned by ${user.name} (uid ${user.uid}), mode 0644`,
    );
    expect(out).toContain(`chown 0 ${config}`);
    expect(existsSync(marker)).toBe(false);
    // Named explicitly, it is refused the same.
    expect(await refused(['--config', config, '--world', 'trust'])).toContain(
      `refusing config file ${config} is owned by ${user.name}`,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('a handlers module of another user, or in a directory others may write, is refused', async () => {
    const dir = mkdtempSync(join(tmp, 'mods-'));
    const theirs = plant(join(dir, 'theirs.mjs'), evil(), user.uid, 0o644);
    let out = await refused(['--world', 'trust', '--handlers', theirs]);
    expect(out).toContain(
      `refusing handlers module ${theirs} is owned by ${user.name} (uid ${user.uid}), mode 0644`,
    );
    const writable = plant(join(dir, 'writable.mjs'), evil(), 0, 0o664);
    out = await refused(['--world', 'trust', '--handlers', writable]);
    expect(out).toContain(
      `handlers module ${writable} is owned by root (uid 0), mode 0664: writable by its group`,
    );
    expect(out).toContain(`chmod go-w ${writable}`);
    // Root's own module, in a directory anyone may write (not sticky): it could be swapped.
    const open = mkdtempSync(join(tmp, 'open-'));
    chmodSync(open, 0o777);
    const swappable = plant(join(open, 'mine.mjs'), evil(), 0, 0o644);
    out = await refused(['--world', 'trust', '--handlers', swappable]);
    expect(out).toContain(
      `the directory of handlers module ${swappable}, ${open} is owned by root (uid 0), mode 0777`,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('an auth file others may read, and a config file with credentials others may read, are refused', async () => {
    const auth = plant(join(tmp, 'auth'), 'ops:s3cret\n', 0, 0o644);
    let out = await refused([
      '--world',
      'trust',
      '--handlers',
      '/nonexistent.mjs',
      '--auth-file',
      auth,
    ]);
    expect(out).toContain(
      `refusing auth file ${auth} is owned by root (uid 0), mode 0644: it holds credentials`,
    );
    expect(out).toContain(`chmod 600 ${auth}`);
    const config = plant(join(tmp, 'creds.yaml'), 'auth: ops:s3cret\n', 0, 0o644);
    out = await refused(['--config', config, '--world', 'trust']);
    expect(out).toContain(
      `refusing config file ${config} is owned by root (uid 0), mode 0644: it holds credentials`,
    );
  });
});
