import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import type { RaceJobResult } from '@zoott/core/jobs';
import { freshNamespace, runningGroupMembers, SELF, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  racesRoot,
  startWorkerDaemon,
  submitJob,
  submitRace,
  type WorkerDaemon,
  waitForResult,
} from '../src/internal.js';

const WORLD = 'cluster';

describe('races over three workers', { timeout: 180_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let dir: string;
  const daemons: WorkerDaemon[] = [];

  beforeAll(async () => {
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dir = mkdtempSync(join(tmpdir(), 'zoott-race-'));
    for (const id of ['r1', 'r2', 'r3'])
      daemons.push(
        await startWorkerDaemon({
          connect: ns,
          createWorld: true,
          world: WORLD,
          nodeId: id,
          concurrency: 8,
          allowExec: ['/bin/sh'],
          runAs: SELF,
          dataDir: dir,
          killGraceMs: 1000,
          logLevel: 'silent',
        }),
      );
  });

  afterAll(async () => {
    await Promise.all(daemons.map((d) => d.stop()));
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('20 inputs, one prints: it wins, every other racer is killed, processes is right', async () => {
    const log = join(dir, 'started.log');
    // Each racer logs "<input> <pid>" (its pid is its process group), then input 7 prints
    // and every other one sleeps until it is killed.
    const script =
      'read x; echo "$x $$" >> "$0"; if [ "$x" = 7 ]; then echo "found $x"; else sleep 60; fi';
    const input = Array.from({ length: 20 }, (_, i) => ({ data: `${i}\n` }));
    const routingkey = 'race-20';
    const { key, world } = await submitRace(
      client,
      { executable: '/bin/sh', arguments: ['-c', script, log], input, routingkey, mark: 'r20' },
      { world: WORLD },
    );
    const rec = await settled(client, world, key, 120_000);
    expect(rec.state, JSON.stringify(rec.error)).toBe('completed');
    const result = rec.result as RaceJobResult;
    expect(result.winner?.stdout).toBe('found 7\n');
    expect(result.winner?.stdin).toBe('7\n');
    expect(result.winner?.exit).toBe(0);
    expect(result.mark).toBe('r20');
    expect('input' in result).toBe(false);
    // `processes` equals what the three workers say they started (this is the first job
    // they run); a racer killed before its shell logged anything still counts.
    let spawned = 0;
    for (const d of daemons) spawned += (await d.metrics.processesStarted.get()).values[0]!.value;
    expect(result.processes).toBe(spawned);
    expect(result.processes).toBeLessThanOrEqual(20);
    const started = readFileSync(log, 'utf8').trim().split('\n');
    expect(started.length).toBeGreaterThanOrEqual(1);
    expect(started.length).toBeLessThanOrEqual(result.processes);
    expect(Date.parse(result.finished)).toBeGreaterThanOrEqual(Date.parse(result.started));
    // No racer process (nor its sleep child) is left.
    const groups = started.map((line) => Number(line.split(' ')[1]));
    await until('every racer group to be gone', () =>
      groups.every((g) => runningGroupMembers(g).length === 0) ? true : undefined,
    );
    // The reply channel got the same result, and the race's nodes and racer tasks are gone.
    const reply = await waitForResult<RaceJobResult>(client, {
      world: WORLD,
      routingkey,
      timeoutMs: 30_000,
    });
    expect(reply.result).toEqual(result);
    expect(await client.children(racesRoot(WORLD))).toEqual([]);
    const engine = createEngine(client, { world: WORLD });
    expect((await engine.list()).filter((t) => t.key[0]!.startsWith(key[0]!))).toEqual([]);
  });

  it('a race where every racer ends normally and silently has no winner', async () => {
    const { key, world } = await submitRace(
      client,
      {
        executable: '/bin/sh',
        arguments: ['-c', 'cat > /dev/null'],
        input: [{ data: 'a' }, { data: 'b' }, { data: 'c' }],
      },
      { world: WORLD },
    );
    const rec = await settled(client, world, key, 120_000);
    const result = rec.result as RaceJobResult;
    expect(result.winner).toBeNull();
    expect(result.processes).toBe(3);
  });

  it('an abnormal end wins too, and a directory input gives one racer per line', async () => {
    mkdirSync(join(dir, 'in'));
    writeFileSync(join(dir, 'in', 'a.txt'), 'ok\nok\n');
    writeFileSync(join(dir, 'in', 'b.txt'), 'bad\nok\n');
    const { key, world } = await submitRace(
      client,
      {
        executable: '/bin/sh',
        arguments: ['-c', 'read x; if [ "$x" = bad ]; then exit 5; fi'],
        input: 'in',
        // By the spec's rule an exit, any code, is a normal end; this race asks otherwise.
        nonZeroExitWins: true,
      },
      { world: WORLD },
    );
    const rec = await settled(client, world, key, 120_000);
    const result = rec.result as RaceJobResult;
    expect(result.winner?.exit).toBe(5);
    expect(result.winner?.stdin).toBe('bad\n');
    expect(result.processes).toBeGreaterThanOrEqual(1);
    expect(result.processes).toBeLessThanOrEqual(4);
  });
});

describe('locality: a job hinted to worker B', { timeout: 180_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let a: WorkerDaemon;
  let b: WorkerDaemon | null;

  beforeAll(async () => {
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    const base = {
      connect: ns,
      createWorld: true,
      world: 'local',
      allowExec: ['/bin/echo'],
      runAs: SELF,
      localityWaitMs: 30_000,
      logLevel: (process.env.ZOOTT_TEST_LOG as 'silent' | undefined) ?? ('silent' as const),
    };
    a = await startWorkerDaemon({ ...base, nodeId: 'node-a' });
    b = await startWorkerDaemon({ ...base, nodeId: 'node-b' });
    // Both registered before any job is queued.
    await until('two registered workers', async () =>
      (await client.children('/zoott_workers/local')).length === 2 ? true : undefined,
    );
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await client?.close();
  });

  it('runs on B while B is up, and on another worker once B is down', async () => {
    const onB = [];
    for (let i = 0; i < 4; i++)
      onB.push(
        await submitJob(
          client,
          { executable: '/bin/echo', arguments: [`b${i}`], server: 'node-b' },
          { world: 'local' },
        ),
      );
    for (const { key } of onB) {
      const rec = await settled(client, 'local', key);
      expect(rec.state).toBe('completed');
      expect(rec.worker?.worker).toBe('node-b');
    }
    await b!.stop();
    b = null;
    await until('B to leave the registry', async () =>
      (await client.children('/zoott_workers/local')).length === 1 ? true : undefined,
    );
    const { key } = await submitJob(
      client,
      { executable: '/bin/echo', arguments: ['moved'], server: 'node-b' },
      { world: 'local' },
    );
    const rec = await settled(client, 'local', key);
    expect(rec.state).toBe('completed');
    expect(rec.worker?.worker).toBe('node-a');
    expect((rec.result as { stdout: string }).stdout).toBe('moved\n');
  });
});
