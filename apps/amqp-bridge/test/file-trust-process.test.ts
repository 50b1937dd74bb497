// The bridge's config file is trusted the way ssh trusts its own, as zoott's and the worker's
// are: owned by the user running it or root, writable by nobody else, and, when it holds
// credentials (the AMQP URL's password, ZooKeeper's auth), readable by nobody else. The built
// bridge as root, with a second user made for the test; --print-config reads the file and
// connects to nothing.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSystemUser, type SystemUser } from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BRIDGE_BIN } from './harness.js';

function printConfig(file: string) {
  const r = spawnSync(process.execPath, [BRIDGE_BIN, '--config', file, '--print-config'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    encoding: 'utf8',
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

describe('the config file zoott-amqp-bridge trusts', () => {
  let dir: string;
  let user: SystemUser;

  beforeAll(() => {
    assertBuilt();
    if (process.getuid?.() !== 0) throw new Error('these tests need root (a second user)');
    user = makeSystemUser('zoott-t-bridge');
    dir = mkdtempSync(join(tmpdir(), 'zoott-bridge-trust-'));
    chmodSync(dir, 0o755);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    user?.remove();
  });

  function plant(name: string, text: string, uid: number, mode: number): string {
    const file = join(dir, name);
    writeFileSync(file, text);
    chownSync(file, uid, 0);
    chmodSync(file, mode);
    return file;
  }

  it("another user's file is refused, whatever its mode, naming it, its owner and mode", () => {
    const file = plant('theirs.yaml', 'world: theirs\n', user.uid, 0o600);
    const r = printConfig(file);
    expect(r.code, r.out).toBe(2);
    expect(r.out).toContain(
      `refusing config file ${file} is owned by ${user.name} (uid ${user.uid}), mode 0600`,
    );
    expect(r.out).toContain(`chown 0 ${file}`);
    expect(r.out).not.toContain('theirs (file)');
  });

  it('a file others may write is refused', () => {
    const file = plant('shared.yaml', 'world: shared\n', 0, 0o666);
    const r = printConfig(file);
    expect(r.code, r.out).toBe(2);
    expect(r.out).toContain(`writable by its group and others`);
    expect(r.out).toContain(`chmod go-w ${file}`);
  });

  it('a file with a password others may read is refused; chmod 600 makes it good', () => {
    const file = plant('url.yaml', 'amqpUrl: amqp://bridge:s3cret@mq:5672/\n', 0, 0o644);
    const r = printConfig(file);
    expect(r.code, r.out).toBe(2);
    expect(r.out).toContain(`it holds credentials, and its group or others may read it`);
    expect(r.out).toContain(`chmod 600 ${file}`);
    expect(r.out).not.toContain('s3cret');
    chmodSync(file, 0o600);
    const ok = printConfig(file);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(/^amqpUrl\s+amqp:\/\/bridge:\*\*\*\*@mq:5672\/\s+\(file\)$/m);
    // Without credentials, a file others may read is fine.
    expect(printConfig(plant('plain.yaml', 'world: plain\n', 0, 0o644)).code).toBe(0);
  });
});
