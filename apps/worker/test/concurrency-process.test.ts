/**
 * `--concurrency` and `--race-concurrency` by their effect: how many jobs, and how many race
 * coordinators, one zoott-worker runs at once, seen in ZooKeeper (the working count of the
 * world, or of its race world) while every job process is held by a FIFO the test opens.
 * The work is queued before the worker starts, so its first claim sees it all and takes as
 * many as it has slots: a setting that never reached the daemon (default 1 job, 4 races)
 * would take a different number in that one claim. The shipped binary on a real ZooKeeper;
 * the race setting is given as a flag, an environment variable and a config-file key.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AreaCounts, type Coordinator, createEngine } from '@zoott/core';
import { RACE_WORLD_BUCKETS, raceWorld, submitJob, submitRace } from '@zoott/jobs/internal';
import { freshNamespace, killMarked, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobWorkerArgs, killWorkers, startWorker, type WorkerProcess } from './worker-bin.js';

// A held process says it started, then waits for a line on its FIFO before it speaks (a
// racer that speaks wins its race). $0 is the test's folder, $1 the job's name.
const HELD = ': > "$0/$1.started"; read go < "$0/$1.go"; echo "$1 $go"';

describe('zoott-worker job and race slots [zookeeper]', { timeout: 180_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let dir: string;
  let worker: WorkerProcess | undefined;
  let worlds = 0;

  beforeAll(async () => {
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dir = mkdtempSync(join(tmpdir(), 'zoott-slots-'));
  });
  afterEach(async () => {
    if (worker) await killWorkers([worker]);
    worker = undefined;
    // Job processes die with a SIGKILLed worker (parent-death signal); this reaps any left.
    killMarked(dir);
  });
  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh world with `n` held jobs (or races of one held racer) queued, before any worker. */
  const queue = async (kind: 'job' | 'race', n: number) => {
    const world = `slots${++worlds}`;
    await createEngine(client, { world }).init();
    await createEngine(client, { world: raceWorld(world), buckets: RACE_WORLD_BUCKETS }).init();
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      const name = `${world}-${kind}${i}`;
      execFileSync('mkfifo', [join(dir, `${name}.go`)]);
      const job = { executable: '/bin/sh', arguments: ['-c', HELD, dir, name] };
      if (kind === 'job') await submitJob(client, job, { world, name });
      else await submitRace(client, { ...job, input: [{ data: '' }] }, { world, name });
      names.push(name);
    }
    return { world, names };
  };

  const start = (world: string, extra: string[], env: Record<string, string> = {}) => {
    worker = startWorker([...jobWorkerArgs(ns, world, `${world}-w`), ...extra], { env });
  };

  /** Waits until `n` held processes of `world` have started; returns their names. */
  const held = (world: string, n: number) =>
    until(`${n} processes of ${world} to start`, () => {
      if (worker?.child.exitCode !== null) throw new Error(`worker exited:\n${worker?.output()}`);
      const s = readdirSync(dir)
        .filter((f) => f.startsWith(`${world}-`) && f.endsWith('.started'))
        .map((f) => f.slice(0, -'.started'.length))
        .sort();
      return s.length >= n ? s : undefined;
    });

  /** The counts of `world`, or of its race world (the coordinators). */
  const counts = (world: string, of: 'jobs' | 'races'): Promise<AreaCounts> =>
    createEngine(
      client,
      of === 'jobs' ? { world } : { world: raceWorld(world), buckets: RACE_WORLD_BUCKETS },
    ).counts();

  /** Lets a held process speak: its job (or race) completes. */
  const release = (name: string) => writeFile(join(dir, `${name}.go`), 'go\n');

  const completed = async (world: string, name: string) => {
    const rec = await settled(client, world, [name], 120_000);
    expect(rec.state, worker?.output()).toBe('completed');
    const r = rec.result as { stdout?: string; winner?: { stdout: string } };
    expect(r.winner?.stdout ?? r.stdout).toBe(`${name} go\n`);
  };

  it('--concurrency 2 runs two jobs at once; the third waits for a slot', async () => {
    const { world, names } = await queue('job', 3);
    start(world, ['--concurrency', '2']);
    const running = await held(world, 2);
    expect(await counts(world, 'jobs')).toMatchObject({ working: 2, pending: 1 });
    await Promise.all(running.map(release));
    for (const n of running) await completed(world, n);
    const [third] = names.filter((n) => !running.includes(n));
    await held(world, 3);
    await release(third!);
    await completed(world, third!);
  });

  it('--race-concurrency 1 runs one coordinator at a time: the next is claimed only when it completes', async () => {
    const { world, names } = await queue('race', 2);
    const races = raceWorld(world);
    start(world, ['--race-concurrency', '1', '--concurrency', '4']);
    const [first] = await held(world, 1);
    expect(await counts(world, 'races')).toMatchObject({ working: 1, pending: 1 });
    await release(first!);
    await completed(races, first!);
    const second = names.find((n) => n !== first)!;
    expect(await held(world, 2)).toEqual([...names].sort());
    expect(await counts(world, 'races')).toMatchObject({ working: 1, pending: 0, completed: 1 });
    await release(second);
    await completed(races, second);
  });

  it.each([
    ['the environment', () => ({ args: [], env: { ZOOTT_RACE_CONCURRENCY: '2' } })],
    [
      'the config file',
      () => {
        const file = join(dir, 'race-slots.yaml');
        writeFileSync(file, 'worker:\n  raceConcurrency: 2\n');
        return { args: ['--config', file], env: {} };
      },
    ],
  ])('race concurrency 2 from %s runs two coordinators at once; a third waits', async (_, how) => {
    const { world, names } = await queue('race', 3);
    const races = raceWorld(world);
    const { args, env } = how();
    start(world, [...args, '--concurrency', '4'], env);
    const running = await held(world, 2);
    expect(await counts(world, 'races')).toMatchObject({ working: 2, pending: 1 });
    await Promise.all(running.map(release));
    for (const n of running) await completed(races, n);
    const [third] = names.filter((n) => !running.includes(n));
    await held(world, 3);
    await release(third!);
    await completed(races, third!);
  });
});
