// What holds a job's processes (containment.ts), with real processes: a descendant that calls
// setsid ends with the job, in a cgroup (as root) and, once the keeper has seen it, without.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunning } from '@zoott/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { containmentFor, jobCgroupSupport, runRegularJob } from '../../src/jobs/index.js';

const dir = mkdtempSync(join(tmpdir(), 'zoott-containment-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Waits (with a deadline) until `cond` holds. */
async function until(cond: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

/** A job that leaves a setsid'd `sleep` behind, its pid in `pidFile`, after `linger` s. */
function leaving(pidFile: string, linger: string) {
  return {
    executable: '/bin/sh',
    arguments: [
      '-c',
      `setsid sh -c 'echo $$ > "$0"; exec sleep 60' "${pidFile}" & sleep ${linger}`,
    ],
  };
}

describe('job containment', () => {
  it('as root, a job gets a cgroup, and what it left behind dies with it at once', async () => {
    if (process.getuid?.() !== 0) throw new Error('runs as root (a cgroup per job)');
    expect(jobCgroupSupport()).toMatchObject({ ok: true });
    const pidFile = join(dir, 'cgroup.pid');
    const r = await runRegularJob(leaving(pidFile, '0.2'), { serverName: 'h', cgroup: 'require' });
    expect(r.exit).toBe(0);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await until(() => !isRunning(pid))).toBe(true);
  });

  it('without a cgroup, a setsid descendant the keeper has seen dies when the job ends', async () => {
    expect(containmentFor('off')).toMatchObject({ ok: false });
    const pidFile = join(dir, 'group.pid');
    // The keeper looks every 0.5 s: the job lives long enough for it to see the descendant.
    const r = await runRegularJob(leaving(pidFile, '1.5'), { serverName: 'h', cgroup: 'off' });
    expect(r.exit).toBe(0);
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await until(() => !isRunning(pid))).toBe(true);
  });

  it('without a cgroup, a stop reaches a setsid descendant through its parent', async () => {
    const pidFile = join(dir, 'stop.pid');
    const ac = new AbortController();
    const run = runRegularJob(leaving(pidFile, '60'), {
      serverName: 'h',
      cgroup: 'off',
      signal: ac.signal,
      killGraceMs: 500,
    });
    expect(await until(() => existsSync(pidFile))).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    ac.abort();
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await until(() => !isRunning(pid))).toBe(true);
  });
});
