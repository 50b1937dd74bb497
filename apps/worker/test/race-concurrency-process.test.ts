/**
 * `--race-concurrency` by its effect: how many race coordinators one zoott-worker runs at
 * once, seen in ZooKeeper (the race world's working count) while every racer is held by a
 * FIFO the test opens. The races are queued before the worker starts, so its first claim
 * sees them all and takes as many as it has race slots: a setting that never reached the
 * daemon (default 4) would take them all in that one claim. The shipped binary on a real
 * ZooKeeper, given the setting as a flag, an environment variable and a config-file key.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AreaCounts, type Coordinator, createEngine } from '@zoott/core';
import { RACE_WORLD_BUCKETS, raceWorld, submitRace } from '@zoott/jobs/internal';
import { freshNamespace, killMarked, SELF, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

// A racer says it started, then waits for a line on its FIFO before it speaks (and wins).
const RACER = 'read name; : > "$0/$name.started"; read go < "$0/$name.go"; echo "$name $go"';

interface Worker {
  child: ChildProcess;
  exited: Promise<unknown>;
  output: () => string;
}

describe('zoott-worker --race-concurrency [zookeeper]', { timeout: 180_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let dir: string;
  let worker: Worker | undefined;
  let worlds = 0;

  beforeAll(async () => {
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dir = mkdtempSync(join(tmpdir(), 'zoott-race-slots-'));
  });
  afterEach(async () => {
    if (worker && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await worker?.exited;
    worker = undefined;
    // Racers die with a SIGKILLed worker (parent-death signal); this reaps any left anyway.
    killMarked(dir);
  });
  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh world with `n` races queued (racers held), before any worker serves it. */
  const queueRaces = async (n: number) => {
    const world = `slots${++worlds}`;
    await createEngine(client, { world }).init();
    await createEngine(client, { world: raceWorld(world), buckets: RACE_WORLD_BUCKETS }).init();
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      const name = `${world}-r${i}`;
      execFileSync('mkfifo', [join(dir, `${name}.go`)]);
      await submitRace(
        client,
        { executable: '/bin/sh', arguments: ['-c', RACER, dir], input: [{ data: `${name}\n` }] },
        { world, name },
      );
      names.push(name);
    }
    return { world, names };
  };

  const start = (world: string, extra: string[], env: Record<string, string> = {}) => {
    const child = spawn(
      process.execPath,
      [
        ...[BIN, '--connect', ns, '--world', world, '--node-id', `${world}-w`],
        ...['--allow-exec', '/bin/sh', '--run-as', SELF, '--concurrency', '4'],
        ...extra,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
    );
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.stderr!.on('data', (b: Buffer) => {
      out += b.toString();
    });
    worker = { child, exited: new Promise((r) => child.once('exit', r)), output: () => out };
  };

  /** The races of `world` whose racer has started. */
  const startedOf = (world: string) =>
    readdirSync(dir)
      .filter((f) => f.startsWith(`${world}-`) && f.endsWith('.started'))
      .map((f) => f.slice(0, -'.started'.length))
      .sort();

  /** Waits until `n` racers of `world` have started; returns their races. */
  const racersStarted = (world: string, n: number) =>
    until(`${n} racers of ${world} to start`, () => {
      if (worker?.child.exitCode !== null) throw new Error(`worker exited:\n${worker?.output()}`);
      const s = startedOf(world);
      return s.length >= n ? s : undefined;
    });

  const raceCounts = (world: string): Promise<AreaCounts> =>
    createEngine(client, { world: raceWorld(world), buckets: RACE_WORLD_BUCKETS }).counts();

  /** Lets a held racer speak: it wins and its race completes. */
  const release = (name: string) => writeFile(join(dir, `${name}.go`), 'go\n');

  const completed = async (world: string, name: string) => {
    const rec = await settled(client, raceWorld(world), [name], 120_000);
    expect(rec.state, worker?.output()).toBe('completed');
    expect((rec.result as { winner: { stdout: string } }).winner.stdout).toBe(`${name} go\n`);
  };

  it('with --race-concurrency 1 one coordinator runs at a time: the next is claimed only when it completes', async () => {
    const { world, names } = await queueRaces(2);
    start(world, ['--race-concurrency', '1']);
    const [first] = await racersStarted(world, 1);
    expect(await raceCounts(world)).toMatchObject({ working: 1, pending: 1 });
    await release(first!);
    await completed(world, first!);
    const second = names.find((n) => n !== first)!;
    expect(await racersStarted(world, 2)).toEqual([...names].sort());
    expect(await raceCounts(world)).toMatchObject({ working: 1, pending: 0, completed: 1 });
    await release(second);
    await completed(world, second);
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
  ])('with 2 from %s two coordinators run at once and a third waits for a slot', async (_, how) => {
    const { world, names } = await queueRaces(3);
    const { args, env } = how();
    start(world, args, env);
    const running = await racersStarted(world, 2);
    expect(running).toHaveLength(2);
    expect(await raceCounts(world)).toMatchObject({ working: 2, pending: 1 });
    await Promise.all(running.map(release));
    for (const n of running) await completed(world, n);
    const [third] = names.filter((n) => !running.includes(n));
    await racersStarted(world, 3);
    await release(third!);
    await completed(world, third!);
  });
});
