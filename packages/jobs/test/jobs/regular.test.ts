import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZoottError } from '@zoott/core';
import { validateRegularJob } from '@zoott/core/jobs';
import { eventually, isRunning, runningGroupMembers } from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectiveTimeout, minimalEnv, runRegularJob } from '../../src/jobs/index.js';

const opts = { serverName: 'test-host', killGraceMs: 500 };
const job = (j: Record<string, unknown>) => validateRegularJob(j);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zoott-jobs-'));
  await writeFile(join(dir, 'not-exec.sh'), '#!/bin/sh\necho hi\n');
  await writeFile(join(dir, 'script.sh'), '#!/bin/sh\necho "script $1"\n');
  await chmod(join(dir, 'script.sh'), 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('runRegularJob', () => {
  it('runs /bin/echo and reports exit 0', async () => {
    const r = await runRegularJob(
      job({ executable: '/bin/echo', arguments: ['hello', 'world'] }),
      opts,
    );
    expect(r.stdout).toBe('hello world\n');
    expect(r.stderr).toBe('');
    expect(r.exit).toBe(0);
    expect('signal' in r).toBe(false);
    expect(r.server).toBe('test-host');
    expect(r.pid).toBeGreaterThan(0);
    expect(new Date(r.finished).getTime()).toBeGreaterThanOrEqual(new Date(r.started).getTime());
    expect(r.truncated).toBeUndefined();
  });

  it('finds a bare name on PATH and passes arguments without a shell', async () => {
    const r = await runRegularJob(
      job({ executable: 'echo', arguments: ['$HOME', '*', '; ls'] }),
      opts,
    );
    expect(r.stdout).toBe('$HOME * ; ls\n');
  });

  it('reports a non-zero exit code and stderr', async () => {
    const r = await runRegularJob(
      job({ executable: '/bin/sh', arguments: ['-c', 'echo oops >&2; exit 3'] }),
      opts,
    );
    expect(r.exit).toBe(3);
    expect(r.stderr).toBe('oops\n');
    expect('signal' in r).toBe(false);
  });

  it('reports death by signal as the signal number', async () => {
    const r = await runRegularJob(
      job({ executable: '/bin/sh', arguments: ['-c', 'kill -9 $$'] }),
      opts,
    );
    expect(r.signal).toBe(9);
    expect('exit' in r).toBe(false);
  });

  it('passes stdin through and keeps custom properties', async () => {
    const r = await runRegularJob(
      job({ executable: '/bin/cat', stdin: 'line 1\nline 2\n', ticket: 'T-1', meta: { a: [1] } }),
      opts,
    );
    expect(r.stdout).toBe('line 1\nline 2\n');
    expect(r.stdin).toBe('line 1\nline 2\n');
    expect(r.ticket).toBe('T-1');
    expect(r.meta).toEqual({ a: [1] });
  });

  it('survives a child that ignores its stdin', async () => {
    const r = await runRegularJob(
      job({ executable: '/bin/true', stdin: 'x'.repeat(1 << 20) }),
      opts,
    );
    expect(r.exit).toBe(0);
  });

  it('truncates large output and says so', async () => {
    const r = await runRegularJob(
      job({ executable: '/bin/sh', arguments: ['-c', 'head -c 300000 /dev/zero | tr "\\0" a'] }),
      { ...opts, maxOutputBytes: 1000 },
    );
    expect(r.stdout).toBe('a'.repeat(1000));
    expect(r.truncated).toBe(true);
    expect(r.exit).toBe(0);
  });

  it('keeps the result JSON under its cap', async () => {
    const r = await runRegularJob(
      job({ executable: '/bin/sh', arguments: ['-c', 'head -c 50000 /dev/zero | tr "\\0" b'] }),
      { ...opts, maxResultBytes: 4096 },
    );
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(4096);
    expect(r.truncated).toBe(true);
  });

  it('kills on timeout with SIGTERM and reports it', async () => {
    const r = await runRegularJob(
      job({ executable: 'sleep', arguments: ['30'], timeoutMs: 200 }),
      opts,
    );
    expect(r.signal).toBe(15);
    expect(r.timedOut).toBe(true);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const r = await runRegularJob(
      job({
        executable: '/bin/sh',
        arguments: ['-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done'],
      }),
      { ...opts, timeoutMs: 200, killGraceMs: 300 },
    );
    expect(r.signal).toBe(9);
    expect(r.timedOut).toBe(true);
    expect(r.stdout).toBe('ready\n');
  });

  it('the smaller of job and worker timeouts applies', () => {
    expect(effectiveTimeout(100, 50)).toBe(50);
    expect(effectiveTimeout(undefined, 50)).toBe(50);
    expect(effectiveTimeout(100, undefined)).toBe(100);
    expect(effectiveTimeout()).toBeUndefined();
  });

  it('abort kills the whole process group and rejects with ABORTED', async () => {
    const ac = new AbortController();
    const pidFile = join(dir, 'bg.pid');
    const running = runRegularJob(
      job({
        executable: '/bin/sh',
        // A background grandchild in the same group, then the leader waits.
        arguments: ['-c', `sleep 30 & echo $! > ${pidFile}; echo started; wait`],
      }),
      { ...opts, signal: ac.signal },
    );
    // Wait until the grandchild exists.
    let grandchild = 0;
    for (let i = 0; i < 200 && !grandchild; i++) {
      await new Promise((r) => setTimeout(r, 25));
      grandchild = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()) || 0;
    }
    expect(grandchild).toBeGreaterThan(0);
    ac.abort(new Error('shutting down'));
    const err = await running.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZoottError);
    expect((err as ZoottError).code).toBe('ABORTED');
    expect(await eventually(() => !isRunning(grandchild))).toBe(true);
  });

  it('reaps background children when the leader exits normally', async () => {
    const pidFile = join(dir, 'orphan.pid');
    const r = await runRegularJob(
      job({
        executable: '/bin/sh',
        arguments: ['-c', `sleep 30 >/dev/null 2>&1 & echo $! > ${pidFile}`],
      }),
      opts,
    );
    expect(r.exit).toBe(0);
    const orphan = Number((await readFile(pidFile, 'utf8')).trim());
    expect(orphan).toBeGreaterThan(0);
    expect(await eventually(() => !isRunning(orphan))).toBe(true);
    expect(runningGroupMembers(r.pid)).toEqual([]);
  });

  it('does not start when already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(
      runRegularJob(job({ executable: '/bin/echo' }), { ...opts, signal: ac.signal }),
    ).rejects.toMatchObject({
      code: 'ABORTED',
    });
  });

  it('reports a missing or non-executable program as a result with error, and no exit', async () => {
    const missing = await runRegularJob(job({ executable: 'no-such-program-zoott' }), opts);
    expect(missing.pid).toBe(0);
    expect(missing).not.toHaveProperty('exit');
    expect(missing).not.toHaveProperty('signal');
    expect(missing.error).toMatch(/not found on PATH/);
    const notExec = await runRegularJob(job({ executable: join(dir, 'not-exec.sh') }), opts);
    expect(notExec).not.toHaveProperty('exit');
    expect(notExec.error).toMatch(/not executable/);
    const isDir = await runRegularJob(job({ executable: dir }), opts);
    expect(isDir).not.toHaveProperty('exit');
    expect(isDir.error).toMatch(/./);
  });

  it('resolves a relative path against cwd and applies the policy hook', async () => {
    const r = await runRegularJob(job({ executable: './script.sh', arguments: ['x'] }), {
      ...opts,
      cwd: dir,
    });
    expect(r.stdout).toBe('script x\n');
    const seen: string[] = [];
    const refused = await runRegularJob(job({ executable: 'echo' }), {
      ...opts,
      allowExec: (p) => {
        seen.push(p);
        return false;
      },
    });
    expect(refused).not.toHaveProperty('exit');
    expect(refused.error).toMatch(/not allowed/);
    expect(seen[0]).toMatch(/\/echo$/);
  });

  it('gives the process a minimal environment', async () => {
    process.env.ZOOTT_SECRET_FOR_TEST = 'hunter2';
    try {
      const r = await runRegularJob(job({ executable: 'env' }), opts);
      expect(r.stdout).not.toContain('ZOOTT_SECRET_FOR_TEST');
      expect(r.stdout).toContain('PATH=');
      const custom = await runRegularJob(job({ executable: '/usr/bin/env' }), {
        ...opts,
        env: { ONLY: 'this' },
      });
      expect(custom.stdout).toBe('ONLY=this\n');
    } finally {
      delete process.env.ZOOTT_SECRET_FOR_TEST;
    }
    expect(Object.keys(minimalEnv({ PATH: '/bin', SECRET: 'x' }))).toEqual(['PATH']);
    expect(minimalEnv({}).PATH).toBe('/usr/local/bin:/usr/bin:/bin');
  });
});
