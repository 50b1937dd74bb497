/**
 * Jobs cannot read the worker's secrets: with `--run-as <user>` a job runs with that user's
 * uid, gid and groups, so `/proc/<worker pid>/environ` is closed to it; a root worker with
 * no `--run-as` refuses the job types. The shipped binary on a real ZooKeeper, with a real
 * unprivileged user made for the test (the tests run as root, in CI too).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { type Coordinator, createEngine } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import { jobUser, submitJob } from '@zoott/jobs/internal';
import { freshNamespace, killMarked, processesWith, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  killWorkers,
  registered,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

const USER = 'zoott-job-test';
const GROUP = 'zoott-job-extra';

/** Creates the unprivileged test user (with one supplementary group) unless it exists. */
function ensureTestUser(): { uid: number; groups: string } {
  if (process.getuid?.() !== 0)
    throw new Error('these tests switch users, so they must run as root (CI runs them as root)');
  try {
    execFileSync('getent', ['group', GROUP], { stdio: 'pipe' });
  } catch {
    execFileSync('groupadd', ['--system', GROUP]);
  }
  try {
    execFileSync('id', ['-u', USER], { stdio: 'pipe' });
  } catch {
    execFileSync('useradd', [
      ...['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent'],
      ...['--shell', '/usr/sbin/nologin', '--groups', GROUP, USER],
    ]);
  }
  const uid = Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }).trim());
  const groups = execFileSync('id', ['-G', USER], { encoding: 'utf8' }).trim();
  return { uid, groups };
}

describe('whom jobs run as', () => {
  it('a root worker without runAs is refused with what to do', () => {
    expect(() => jobUser(undefined, { uid: 0 })).toThrow(
      /runs as root.*\/proc\/<worker pid>\/environ.*--run-as <user>.*--run-as root/,
    );
    expect(jobUser(undefined, { uid: 1000 })).toBeNull();
    // Naming the worker's own user is the explicit opt-in: no switch.
    expect(jobUser('root', { uid: 0 })).toBeNull();
  });

  it('an unknown user, or a switch without root, is a clear configuration error', () => {
    expect(() => jobUser('no-such-user-zoott', { uid: 0 })).toThrow(
      /runAs "no-such-user-zoott": no such user/,
    );
    expect(() => jobUser('root', { uid: 1000 })).toThrow(/needs a worker running as root/);
    expect(() => jobUser('a:b', { uid: 0 })).toThrow(/not a user name or uid/);
  });
});

describe('the zoott-worker binary with --run-as [zookeeper]', { timeout: 120_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let testUser: { uid: number; groups: string };
  const secret = `s3cret-${randomUUID()}`;
  const marker = `zoott-runas-${randomUUID()}`;
  const started: WorkerProcess[] = [];

  function startBin(args: string[]): WorkerProcess {
    const worker = startWorker(['--connect', ns, '--work-dir', '/tmp', ...args], {
      // A secret in the worker's environment, as ZOOTT_AUTH would be.
      env: { ZOOTT_TEST_SECRET: secret },
    });
    started.push(worker);
    return worker;
  }

  /** A job that reports its identity and tries to read its parent's (the worker's) environment. */
  const probe = {
    executable: '/bin/sh',
    arguments: [
      '-c',
      'echo "$PPID"; id -u; id -G; echo "$HOME"; cat /proc/$PPID/environ | tr "\\0" "\\n"',
    ],
  };

  beforeAll(async () => {
    requireBin();
    testUser = ensureTestUser();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    for (const world of ['asuser', 'asroot', 'orphan'])
      await createEngine(client, { world }).init();
  });
  afterEach(async () => {
    await killWorkers(started.splice(0));
    killMarked(marker);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('a root worker with --allow-exec and no --run-as exits 2, saying what to do', async () => {
    const { exited, output } = startBin(['--world', 'refuse', '--allow-exec', '/bin/sh']);
    expect((await exited).code, output()).toBe(2);
    expect(output()).toMatch(/runs as root.*--run-as <user>/);
  });

  it('a job run as the test user has its uid and groups and cannot read the worker environment', async () => {
    const { child, output } = startBin([
      ...['--world', 'asuser', '--allow-exec', '/bin/sh', '--run-as', USER],
    ]);
    await registered(client, 'asuser');
    const { key } = await submitJob(client, probe, { world: 'asuser' });
    const rec = await settled(client, 'asuser', key);
    expect(rec.state, output()).toBe('completed');
    const r = rec.result as RegularJobResult;
    const [ppid, uid, groups, home] = r.stdout.split('\n');
    expect(Number(ppid)).toBe(child.pid);
    expect(Number(uid)).toBe(testUser.uid);
    expect(groups).toBe(testUser.groups);
    expect(groups!.split(' ').length).toBeGreaterThan(1);
    expect(home).toBe('/nonexistent');
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).toMatch(/Permission denied/);
  });

  it('--run-as root (the explicit opt-in) runs jobs as root, which can read the secret', async () => {
    const { output } = startBin([
      '--world',
      'asroot',
      '--allow-exec',
      '/bin/sh',
      '--run-as',
      'root',
    ]);
    await registered(client, 'asroot');
    const { key } = await submitJob(client, probe, { world: 'asroot' });
    const rec = await settled(client, 'asroot', key);
    expect(rec.state, output()).toBe('completed');
    const r = rec.result as RegularJobResult;
    expect(r.stdout.split('\n')[1]).toBe('0');
    // This is what --run-as <user> prevents.
    expect(r.stdout).toContain(`ZOOTT_TEST_SECRET=${secret}`);
  });

  it('a job run as another user still dies with its SIGKILLed worker', async () => {
    const { child, exited } = startBin([
      ...['--world', 'orphan', '--allow-exec', '/bin/sh', '--run-as', USER],
    ]);
    await registered(client, 'orphan');
    await submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', 'sleep 300', marker] },
      { world: 'orphan' },
    );
    await until('the job process', () => (processesWith(marker).length > 0 ? true : undefined));
    child.kill('SIGKILL');
    await exited;
    await until(
      'the job to die with its worker',
      () => (processesWith(marker).length === 0 ? true : undefined),
      20_000,
    );
  });
});
