// The launcher a job starts through (launcher.ts): it runs as the worker's user before the job,
// so it must read nothing of the job's user, leave the job's environment exactly as given,
// and close what the job must not get.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegularJob } from '@zoott/core/jobs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, launcherShell, leakedFds, runRegularJob } from '../../src/jobs/index.js';

const job = (j: Partial<RegularJob>): RegularJob => ({ executable: '/usr/bin/env', ...j });

describe('the job launcher', () => {
  let home: string;
  const planted = () => join(home, 'ran');

  beforeAll(() => {
    // What a job's user could leave in its home for a shell to read.
    home = mkdtempSync(join(tmpdir(), 'zoott-launcher-'));
    for (const rc of ['.bashrc', '.bash_profile', '.profile'])
      writeFileSync(join(home, rc), `echo ${rc} >> ${join(home, 'ran')}\n`);
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('reads no startup file of the HOME it is given (the job user’s), and adds nothing to the environment', async () => {
    const env = { PATH: '/usr/bin:/bin', HOME: home, ONLY: 'this' };
    const r = await runRegularJob(job({}), { serverName: 'h', env });
    expect(r.exit).toBe(0);
    expect(existsSync(planted())).toBe(false);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(
      ['HOME=' + home, 'ONLY=this', 'PATH=/usr/bin:/bin'].sort(),
    );
  });

  it('passes PWD and SHLVL on as given', async () => {
    const env = { PATH: '/usr/bin:/bin', PWD: '/given', SHLVL: '7' };
    const r = await runRegularJob(job({}), { serverName: 'h', env, cwd: '/tmp' });
    expect(r.stdout).toContain('PWD=/given\n');
    expect(r.stdout).toContain('SHLVL=7\n');
  });

  it('runs in /bin/sh, or in bash when this process holds a descriptor from 10 up that sh cannot close', () => {
    if (!existsSync('/bin/bash') && !existsSync('/usr/bin/bash')) return;
    const shell = launcherShell();
    if (leakedFds(10).length > 0) {
      expect(shell.path).toMatch(/bash$/);
      expect(shell.flags).toEqual(['--norc', '--noprofile', '-p']);
    } else expect(shell.path).toBe('/bin/sh');
  });

  it('with plain sh, closes descriptors 4 to 9 and points inherited higher ones at /dev/null', () => {
    const sh = { path: '/bin/sh', flags: [], limit: 10, addsShlvl: false };
    const l = launch(['/bin/sh', '-c', 'ls -l /proc/$$/fd'], null, 2, {}, sh);
    // A parent that leaves 5 and 7 open (no close-on-exec), as an inherited descriptor is.
    const r = spawnSync(
      '/bin/bash',
      ['-c', 'exec 5</etc/hostname 7</etc/hostname; exec "$@"', 'parent', l.file, ...l.args],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', ...l.extraStdio] },
    );
    expect(r.stderr).toBe('');
    const fds = [...r.stdout.matchAll(/ (\d+) -> (.*)$/gm)].map(
      (m) => [Number(m[1]), m[2]] as const,
    );
    expect(fds.filter(([fd]) => fd <= 2).map(([fd]) => fd)).toEqual([0, 1, 2]);
    // 3 to 9 are closed; what this test process leaked from 10 up reaches sh as /dev/null.
    for (const [fd, target] of fds.filter(([fd]) => fd > 2)) {
      expect(fd).toBeGreaterThanOrEqual(10);
      expect(target).toBe('/dev/null');
    }
  });
});
