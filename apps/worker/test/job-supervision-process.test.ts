/**
 * A job's processes live and die with its claim, on the built daemon and a real ZooKeeper: a
 * worker SIGKILLed, or stopped (SIGSTOP) past its session timeout, leaves nothing of its job
 * running while another worker runs it again (the job's own start, tick and end marks never
 * overlap), and a descendant that called setsid goes with the rest, with a cgroup (`auto`, as
 * root here) and with process groups only (`off`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import { cgroup2Mount, submitJob } from '@zoott/jobs/internal';
import {
  freshNamespace,
  killMarked,
  makeSystemUser,
  processesWith,
  settled,
  until,
} from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectNoOverlap, firstRunTicking, markingJob, runsOf } from './job-marks.js';
import {
  BIN,
  jobWorkerArgs,
  killWorkers,
  registered,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

const SESSION_MS = 4000;
const MODES = ['auto', 'off'] as const;

describe('job processes end with their claim', { timeout: 180_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let dir: string;
  const workers: WorkerProcess[] = [];
  // A number: `sleep` takes it as one more (tiny) duration, so every process carries it.
  const marker = `0.000${process.pid}${Date.now() % 100_000}`;

  beforeAll(async () => {
    requireBin();
    if (process.getuid?.() !== 0) throw new Error('these tests need root (a cgroup per job)');
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dir = mkdtempSync(join(tmpdir(), 'zoott-supervision-'));
  });
  afterEach(async () => {
    for (const w of workers) if (w.child.signalCode === 'SIGSTOP') w.child.kill('SIGCONT');
    await killWorkers(workers.splice(0));
    killMarked(marker);
  });
  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(world: string, id: string, mode: string): WorkerProcess {
    const w = startWorker([
      ...jobWorkerArgs(ns, world, id),
      ...['--session-timeout', String(SESSION_MS), '--create-world', '--job-cgroup', mode],
    ]);
    workers.push(w);
    return w;
  }

  /** The keeper of worker `pid` (its command line names it: `node - zoott-job-keeper <pid>`). */
  const keeperOf = (pid: number) => processesWith(`zoott-job-keeper\0${pid}\0`);

  /** Job cgroups this host still holds for worker `pid`. */
  function cgroupsOf(pid: number): string[] {
    const mount = cgroup2Mount(readFileSync('/proc/self/mountinfo', 'utf8'));
    if (mount === null) return [];
    return readdirSync(mount).filter((n) => n.startsWith(`zoott-jobs.${pid}.`));
  }

  /** Runs a marking job on worker A; `stop` takes A away; B runs it again; checks the marks. */
  async function rerunAfter(
    world: string,
    mode: string,
    stop: (a: WorkerProcess) => Promise<void>,
  ): Promise<{ a: WorkerProcess; result: RegularJobResult; marks: string }> {
    const marks = join(dir, `${world}.marks`);
    const a = start(world, 'A', mode);
    await registered(client, world, 1);
    const { key } = await submitJob(client, markingJob(marks, marker, 30), { world });
    await firstRunTicking(marks, marker);
    await stop(a);
    start(world, 'B', mode);
    const rec = await settled(client, world, key, 120_000);
    expect(rec.state).toBe('completed');
    const runs = runsOf(marks);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.ended).toBe(true);
    expectNoOverlap(runs);
    const result = rec.result as RegularJobResult;
    expect(result.pid).toBe(runs[1]!.pid);
    await until('nothing of the job left', () =>
      processesWith(marker).length === 0 ? true : undefined,
    );
    return { a, result, marks };
  }

  it.each(MODES)('a SIGKILLed worker takes its whole job with it (job cgroup %s)', async (mode) => {
    const { a } = await rerunAfter(`killed-${mode}`, mode, async (w) => {
      w.child.kill('SIGKILL');
      await w.exited;
      // Within the session timeout, before anyone else may claim the job.
      await until(
        'the job and its descendant to die with their worker',
        () => (processesWith(marker).length === 0 ? true : undefined),
        SESSION_MS,
      );
    });
    await until('its keeper to exit', () =>
      keeperOf(a.child.pid!).length === 0 ? true : undefined,
    );
    expect(cgroupsOf(a.child.pid!)).toEqual([]);
  });

  it.each(MODES)(
    'a worker stopped past its session timeout leaves no job running (job cgroup %s)',
    async (mode) => {
      const { a, result } = await rerunAfter(`stopped-${mode}`, mode, async (w) => {
        w.child.kill('SIGSTOP');
        await until(
          'the keeper to kill the job of the stopped worker',
          () => (processesWith(marker).length === 0 ? true : undefined),
          SESSION_MS,
        );
      });
      // Back, it finds its session gone: it records nothing (the result is the re-run's).
      a.child.kill('SIGCONT');
      await until('the stopped worker to learn its session is lost', () =>
        /session lost|session expired|SESSION_EXPIRED/i.test(a.output()) ? true : undefined,
      );
      expect(result.exit).toBe(0);
    },
  );

  it('a worker stopped for less than half its session timeout keeps its job', async () => {
    const world = 'paused';
    const marks = join(dir, `${world}.marks`);
    const a = start(world, 'A', 'auto');
    await registered(client, world, 1);
    const { key } = await submitJob(client, markingJob(marks, marker, 20), { world });
    await firstRunTicking(marks, marker);
    a.child.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, SESSION_MS / 8));
    a.child.kill('SIGCONT');
    const rec = await settled(client, world, key);
    expect(rec.state, a.output()).toBe('completed');
    const runs = runsOf(marks);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.ended).toBe(true);
  });

  it.each(MODES)('cancel stops a setsid descendant too (job cgroup %s)', async (mode) => {
    const world = `cancel-${mode}`;
    const marks = join(dir, `${world}.marks`);
    start(world, 'A', mode);
    await registered(client, world, 1);
    const { key } = await submitJob(client, markingJob(marks, marker, 600), { world });
    await firstRunTicking(marks, marker);
    expect(await createEngine(client, { world }).cancel(key)).toEqual([key]);
    await until('every process of the job to be gone', () =>
      processesWith(marker).length === 0 ? true : undefined,
    );
  });

  it('a keeper that was killed is started again and still holds the running job', async () => {
    const world = 'rekept';
    const marks = join(dir, `${world}.marks`);
    const a = start(world, 'A', 'auto');
    await registered(client, world, 1);
    await submitJob(client, markingJob(marks, marker, 600), { world });
    await firstRunTicking(marks, marker);
    const [first] = keeperOf(a.child.pid!);
    expect(first).toBeGreaterThan(0);
    process.kill(first!, 'SIGKILL');
    const second = await until('a new keeper', () => {
      const [pid] = keeperOf(a.child.pid!);
      return pid !== undefined && pid !== first ? pid : undefined;
    });
    expect(second).not.toBe(first);
    // The new keeper was told of the job: the worker's death still takes it.
    a.child.kill('SIGKILL');
    await a.exited;
    await until(
      'the job to die with its worker',
      () => (processesWith(marker).length === 0 ? true : undefined),
      SESSION_MS,
    );
  });

  it('a worker that may not make cgroups falls back to process groups, or with require refuses to start', async () => {
    const user = makeSystemUser('zoott-t-nocg');
    const asUser = (mode: string) => {
      const w = spawn(
        'setpriv',
        [
          ...['--reuid', String(user.uid), '--regid', String(user.gid), '--clear-groups'],
          ...[process.execPath, BIN, '--connect', ns, '--world', 'nocg', '--create-world'],
          ...['--allow-exec', '/bin/true', '--job-cgroup', mode, '--work-dir', '/tmp'],
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], cwd: '/tmp', env: { PATH: process.env.PATH ?? '' } },
      );
      let out = '';
      w.stdout!.on('data', (b: Buffer) => (out += b));
      w.stderr!.on('data', (b: Buffer) => (out += b));
      const exited = new Promise<number | null>((r) => w.once('exit', r));
      return { w, exited, output: () => out };
    };
    try {
      const required = asUser('require');
      expect(await required.exited, required.output()).toBe(2);
      expect(required.output()).toMatch(
        /jobCgroup: require, but this worker cannot give jobs a cgroup: cannot make .*zoott-jobs\.\d+\.\w+ \(EACCES\)/,
      );
      const auto = asUser('auto');
      try {
        await until('the worker to start', () =>
          /"msg":"worker started"/.test(auto.output()) ? true : undefined,
        );
        expect(auto.output()).toMatch(/"jobCgroup":"none \(process groups: cannot make /);
      } finally {
        auto.w.kill('SIGKILL');
        await auto.exited;
      }
    } finally {
      user.remove();
    }
  });

  it('a setsid descendant left behind by a job that ended is killed with it', async () => {
    const world = 'leftover';
    const marks = join(dir, `${world}.marks`);
    start(world, 'A', 'auto');
    await registered(client, world, 1);
    const { key } = await submitJob(client, markingJob(marks, marker, 5), { world });
    expect((await settled(client, world, key)).state).toBe('completed');
    await until('the descendant to be gone', () =>
      processesWith(marker).length === 0 ? true : undefined,
    );
  });
});
