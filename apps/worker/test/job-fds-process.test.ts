/**
 * A job gets exactly stdin, stdout, stderr and its report channel (fd 3): nothing else the
 * worker holds open reaches it. The built daemon, started (as root) holding a root-only file
 * open on descriptors it inherited without close-on-exec, as a shell's `exec 30<file` or a
 * service manager leaves them; its job runs as a second user made for the test.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import { submitJob } from '@zoott/jobs/internal';
import { freshNamespace, makeSystemUser, type SystemUser, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BIN, requireBin } from './worker-bin.js';

describe('the descriptors a job gets', { timeout: 120_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let user: SystemUser;
  let dir: string;
  const secret = `root-only-${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    requireBin();
    user = makeSystemUser('zoott-t-fds');
    dir = mkdtempSync(join(tmpdir(), 'zoott-fds-'));
    chmodSync(dir, 0o700);
    writeFileSync(join(dir, 'secret'), secret, { mode: 0o600 });
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    await createEngine(client, { world: 'fds' }).init();
  });
  afterAll(async () => {
    await client?.close();
    user?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are 0 to 3 only, whatever the worker inherited open', async () => {
    const held = openSync(join(dir, 'secret'), 'r');
    // The worker gets the file on descriptors 5 and 30, without close-on-exec (spawn dup2s).
    const stdio: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'pipe'];
    for (let fd = 3; fd <= 30; fd++) stdio.push(fd === 5 || fd === 30 ? held : 'ignore');
    const worker = spawn(
      process.execPath,
      [
        BIN,
        ...['--connect', ns, '--world', 'fds', '--node-id', 'fds', '--work-dir', '/tmp'],
        ...['--allow-exec', '/bin/bash', '--run-as', user.name],
      ],
      { stdio, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
    );
    let out = '';
    worker.stdout!.on('data', (b: Buffer) => (out += b));
    worker.stderr!.on('data', (b: Buffer) => (out += b));
    try {
      await until('the worker to register', async () =>
        (await client.children('/zoott_workers/fds').catch(() => [])).length > 0 ? true : undefined,
      );
      // The job lists its own descriptors and reads through the two the worker held.
      const probe = 'ls -1 /proc/$$/fd; cat <&5 2>&1; cat <&30 2>&1; true';
      const { key } = await submitJob(
        client,
        { executable: '/bin/bash', arguments: ['-c', probe] },
        { world: 'fds' },
      );
      const rec = await settled(client, 'fds', key);
      expect(rec.state, out).toBe('completed');
      const r = rec.result as RegularJobResult;
      expect(r.stdout).not.toContain(secret);
      const fds = r.stdout.split('\n').filter((l) => /^\d+$/.test(l));
      expect(fds).toEqual(['0', '1', '2', '3']);
    } finally {
      worker.kill('SIGKILL');
    }
  });
});
