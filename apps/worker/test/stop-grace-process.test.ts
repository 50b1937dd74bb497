/**
 * `--grace` and `--kill-grace` by their effect on the shipped binary and a real ZooKeeper,
 * each given as a flag, an environment variable and a config-file key (600000 ms), beside a
 * control worker left at the default. Both settings are durations, so the tests order each
 * effect against the same event in the control instead of against a clock: the tested
 * workers' jobs are stopped first, the control's after; once the control has given up at
 * its default, every tested job must still run, and it finishes when the test lets it. A
 * setting that never reached the daemon (the default in its place) would have given up
 * before the control did. Each test lasts as long as the control's default (30 s and 5 s).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { submitJob } from '@zoott/jobs/internal';
import { freshNamespace, killMarked, processesWith, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  HELD,
  jobWorkerArgs,
  killWorkers,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

// A job that, told to stop (SIGTERM), says so and then runs on until the test writes its
// `.go` file: it ends by itself only if nothing SIGKILLs it first.
const TRAPPED = [
  'trap \'touch "$0/$1.term"; until [ -e "$0/$1.go" ]; do sleep 0.1; done; touch "$0/$1.done"; exit 0\' TERM',
  'touch "$0/$1.started"',
  'while :; do sleep 0.1; done',
].join('\n');

/** Far longer than any test: what the tested workers get. */
const LONG = 600_000;

interface Setting {
  flag: string;
  env: string;
  key: string;
}

interface Started {
  /** flag, env, file, or control (the default). */
  form: string;
  world: string;
  /** Its one job's name: also its mark in the job's command line and its files' names. */
  job: string;
  worker: WorkerProcess;
}

describe('zoott-worker --grace and --kill-grace [zookeeper]', { timeout: 300_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let dir: string;
  let started: Started[] = [];

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dir = mkdtempSync(join(tmpdir(), 'zoott-stop-grace-'));
  });
  afterEach(async () => {
    await killWorkers(started.map((s) => s.worker));
    started = [];
    // Job processes die with a SIGKILLed worker (parent-death signal); this reaps any left.
    killMarked(dir);
  });
  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Four workers, each alone in a world of its own running one job of `script`: three get
   * `setting` at 600000 ms, one form each, the control gets nothing. Returns once every job
   * runs, control last.
   */
  async function startFour(prefix: string, setting: Setting, script: string): Promise<Started[]> {
    const config = join(dir, `${prefix}.yaml`);
    writeFileSync(config, `worker:\n  ${setting.key}: ${LONG}\n`);
    const forms: Array<[string, string[], Record<string, string>]> = [
      ['flag', [setting.flag, String(LONG)], {}],
      ['env', [], { [setting.env]: String(LONG) }],
      ['file', ['--config', config], {}],
      ['control', [], {}],
    ];
    for (const [form, args, env] of forms) {
      const world = `${prefix}-${form}`;
      await createEngine(client, { world }).init();
      // No config file is found (none in its working directory): the control has the default.
      const worker = startWorker([...jobWorkerArgs(ns, world, world), ...args], { env, cwd: dir });
      const job = `${world}-job`;
      started.push({ form, world, job, worker });
      await submitJob(
        client,
        { executable: '/bin/sh', arguments: ['-c', script, dir, job] },
        { world, name: job },
      );
    }
    for (const s of started)
      await until(`the job of ${s.world} to start`, () => {
        if (s.worker.child.exitCode !== null)
          throw new Error(`${s.world} exited:\n${s.worker.output()}`);
        return existsSync(join(dir, `${s.job}.started`)) ? true : undefined;
      });
    return started;
  }

  const state = async (s: Started) =>
    (await createEngine(client, { world: s.world }).task([s.job]))?.state;
  const logged = (s: Started, msg: string) =>
    until(`${s.world} to log "${msg}"`, () =>
      s.worker.output().includes(`"msg":"${msg}"`) ? true : undefined,
    );

  it('--grace: a stopped worker lets its running job finish for that long (the control aborts its job at the default)', async () => {
    const all = await startFour(
      'grace',
      { flag: '--grace', env: 'ZOOTT_GRACE_MS', key: 'graceMs' },
      HELD,
    );
    const tested = all.filter((s) => s.form !== 'control');
    const control = all.find((s) => s.form === 'control')!;
    for (const s of tested) {
      s.worker.child.kill('SIGTERM');
      await logged(s, 'stopping: no new claims');
    }
    control.worker.child.kill('SIGTERM');
    // The control's grace ran out: it aborted its job, gave the task back and exited.
    expect(await control.worker.exited, control.worker.output()).toEqual({ code: 0, signal: null });
    expect(control.worker.output()).toContain('"msg":"task given back (worker stopping)"');
    expect(await state(control)).toBe('pending');
    // Stopped earlier, with the setting: still running their jobs.
    for (const s of tested) {
      expect(await state(s), `${s.form}: the job outlived the control's grace`).toBe('working');
      expect(s.worker.child.exitCode, s.worker.output()).toBeNull();
    }
    for (const s of tested) writeFileSync(join(dir, `${s.job}.go`), '');
    for (const s of tested) {
      expect(await s.worker.exited, s.worker.output()).toEqual({ code: 0, signal: null });
      const rec = await settled(client, s.world, [s.job]);
      expect(rec.state, s.form).toBe('completed');
      expect((rec.result as { stdout: string }).stdout).toBe(`${s.job} done\n`);
    }
  });

  it('--kill-grace: a cancelled job that traps SIGTERM gets that long before SIGKILL (the control is killed at the default)', async () => {
    const all = await startFour(
      'kgrace',
      { flag: '--kill-grace', env: 'ZOOTT_KILL_GRACE_MS', key: 'killGraceMs' },
      TRAPPED,
    );
    const tested = all.filter((s) => s.form !== 'control');
    const control = all.find((s) => s.form === 'control')!;
    const cancel = async (s: Started) => {
      expect(await createEngine(client, { world: s.world }).cancel([s.job])).toEqual([[s.job]]);
      await until(`the job of ${s.world} to get SIGTERM`, () =>
        existsSync(join(dir, `${s.job}.term`)) ? true : undefined,
      );
    };
    for (const s of tested) await cancel(s);
    await cancel(control);
    // The control's job never gets its `.go`: it ends only by SIGKILL, after the default
    // grace; the worker logs the cancel once the process is gone.
    await logged(control, 'task cancelled while running; result dropped');
    expect(processesWith(control.job)).toEqual([]);
    expect(existsSync(join(dir, `${control.job}.done`))).toBe(false);
    // Told to stop earlier, with the setting: still running.
    for (const s of tested)
      expect(
        processesWith(s.job).length,
        `${s.form}: the job outlived the control's kill grace`,
      ).toBeGreaterThan(0);
    for (const s of tested) writeFileSync(join(dir, `${s.job}.go`), '');
    for (const s of tested) {
      await logged(s, 'task cancelled while running; result dropped');
      // It ended by itself: its SIGTERM handler ran to the end.
      expect(existsSync(join(dir, `${s.job}.done`)), s.form).toBe(true);
      expect(processesWith(s.job)).toEqual([]);
    }
  });
});
