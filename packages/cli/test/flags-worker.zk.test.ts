import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, json, until, WORKER_BIN, zoott } from './helpers.js';

// zoott-worker flags whose only other test reads them back with --print-config: each here
// changes what a real worker does, seen from outside (a job's outcome through `zoott submit
// --wait`, the ACL ZooKeeper holds, the address the metrics answer on).
const SLOW = 240_000;
const tmp = mkdtempSync(join(tmpdir(), 'zoott-worker-flags-'));
const workers: ChildProcess[] = [];

beforeAll(assertBuilt);
afterEach(() => {
  for (const w of workers.splice(0)) w.kill('SIGKILL');
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * Starts zoott-worker on `world` serving /bin/sleep and /bin/sh jobs, with `flags`; resolves with its
 * "worker started" log line.
 */
async function worker(connect: string, world: string, flags: string[]) {
  const args = ['--connect', connect, '--world', world, '--create-world', '--allow-exec'];
  args.push('/bin/sleep,/bin/sh', '--run-as');
  const child = spawn(process.execPath, [WORKER_BIN, ...args, userInfo().username, ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const started = () => out.split('\n').find((l) => l.includes('"msg":"worker started"'));
  await until(() => started() !== undefined || child.exitCode !== null, 'the worker to start');
  if (!started()) throw new Error(`the worker exited:\n${out}`);
  return JSON.parse(started()!) as Record<string, unknown>;
}

describe('zoott-worker flags, by their effect', { timeout: SLOW }, () => {
  it('--job-timeout stops a job that runs longer; one that ignores SIGTERM is killed', async () => {
    const connect = await freshConnect();
    await worker(connect, 'jt', ['--job-timeout', '500', '--kill-grace', '100']);
    const submit = async (job: object) => {
      const file = join(tmp, 'job.json');
      writeFileSync(file, JSON.stringify(job));
      const args = ['--connect', connect, '--world', 'jt', '--json', 'submit', file, '--wait'];
      const r = await zoott([...args, '--timeout', '120'], { timeoutMs: 150_000 });
      return { code: r.code, result: json<{ result: Record<string, unknown> }>(r).result };
    };
    // Stopped long before its 600 s: the worker's ceiling, not the job, ended it.
    const slept = await submit({ executable: '/bin/sleep', arguments: ['600'] });
    expect(slept.code).toBe(143);
    expect(slept.result).toMatchObject({ timedOut: true, signal: 15 });
    // SIGTERM ignored: after the --kill-grace, SIGKILL.
    const stubborn = await submit({
      executable: '/bin/sh',
      arguments: ['-c', 'trap "" TERM; sleep 600'],
    });
    expect(stubborn.result).toMatchObject({ timedOut: true, signal: 9 });
  });

  it('--acl gives every node the worker creates the ACL it names', async () => {
    const connect = await freshConnect();
    await worker(connect, 'acl', [
      ...['--auth', 'ops:pw-ops', '--acl', 'ops:pw-ops:cdrwa,viewer:pw-viewer:r'],
    ]);
    const ops = await connectZk(connect, { auth: [{ scheme: 'digest', auth: 'ops:pw-ops' }] });
    try {
      const { acl } = await ops.getAcl('/zoott_acl');
      const ids = JSON.stringify(acl);
      expect(ids).toMatch(/ops:/);
      expect(ids).toMatch(/viewer:/);
      expect(ids).not.toMatch(/anyone/);
    } finally {
      await ops.close();
    }
  });

  it('--metrics-host binds the metrics endpoint to that address', async () => {
    const connect = await freshConnect();
    const started = await worker(connect, 'mh', [
      ...['--metrics-port', '0', '--metrics-host', '127.0.0.2'],
    ]);
    const url = String(started.metrics);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.2:\d+/);
    const res = await fetch(new URL('/metrics', url));
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/zoott_/);
  });
});
