import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import { freshNamespace, SELF, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorkerDaemon, submitJob, type WorkerDaemon } from '../src/internal.js';

const WORLD = 'files';

describe('locality that steers: the filename hint', { timeout: 180_000 }, () => {
  let client: Coordinator;
  let root: string;
  let a: WorkerDaemon | null = null;
  let b: WorkerDaemon;

  beforeAll(async () => {
    const ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    root = mkdtempSync(join(tmpdir(), 'zoott-file-locality-'));
    for (const n of ['a', 'b']) {
      mkdirSync(join(root, n, 'data', 'logs'), { recursive: true });
      mkdirSync(join(root, n, 'work'), { recursive: true });
    }
    // Only A holds the file.
    writeFileSync(join(root, 'a', 'data', 'logs', 'x.log'), 'x\n');
    const base = {
      connect: ns,
      createWorld: true,
      world: WORLD,
      concurrency: 4,
      allowExec: ['/bin/pwd'],
      runAs: SELF,
      localityWaitMs: 30_000,
      logLevel: 'silent' as const,
    };
    const dirs = (n: string) => ({
      dataDir: join(root, n, 'data'),
      workDir: join(root, n, 'work'),
    });
    a = await startWorkerDaemon({ ...base, ...dirs('a'), nodeId: 'file-a' });
    b = await startWorkerDaemon({ ...base, ...dirs('b'), nodeId: 'file-b' });
    await until('two registered workers', async () =>
      (await client.children(`/zoott_workers/${WORLD}`)).length === 2 ? true : undefined,
    );
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await client?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** Runs a job hinted to logs/x.log; its stdout is the working directory of its worker. */
  const ranOn = async (): Promise<string> => {
    const { key } = await submitJob(
      client,
      { executable: '/bin/pwd', filename: 'logs/x.log' },
      { world: WORLD },
    );
    const rec = await settled(client, WORLD, key, 120_000);
    expect(rec.state).toBe('completed');
    return (rec.result as RegularJobResult).stdout.trim();
  };

  it('12 jobs hinted to a file held by one of two workers run on that worker', async () => {
    const where = await Promise.all(Array.from({ length: 12 }, ranOn));
    expect(where).toEqual(Array(12).fill(join(root, 'a', 'work')));
  });

  it('with the holder gone, the other worker takes the job', async () => {
    await a?.stop();
    a = null;
    await until('one registered worker', async () =>
      (await client.children(`/zoott_workers/${WORLD}`)).length === 1 ? true : undefined,
    );
    expect(await ranOn()).toBe(join(root, 'b', 'work'));
  });
});

describe('locality that steers: the dataset hint and --datasets', { timeout: 180_000 }, () => {
  let client: Coordinator;
  const daemons: WorkerDaemon[] = [];

  beforeAll(async () => {
    const ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    const base = {
      connect: ns,
      createWorld: true,
      world: 'cached',
      concurrency: 4,
      localityWaitMs: 30_000,
      logLevel: 'silent' as const,
    };
    daemons.push(
      await startWorkerDaemon({
        ...base,
        nodeId: 'ds-a',
        datasets: ['geo'],
        handlers: { probe: () => 'a' },
      }),
      await startWorkerDaemon({
        ...base,
        nodeId: 'ds-b',
        datasets: ['logs'],
        handlers: { probe: () => 'b' },
      }),
    );
    await until('two registered workers', async () =>
      (await client.children('/zoott_workers/cached')).length === 2 ? true : undefined,
    );
  });

  afterAll(async () => {
    for (const d of daemons) await d.stop();
    await client?.close();
  });

  it('12 tasks hinted to a dataset one of two workers caches run on that worker', async () => {
    const engine = createEngine(client, { world: 'cached' });
    const queued = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        engine.queue({ name: `geo-${i}`, type: 'probe', data: null, hints: { dataset: 'geo' } }),
      ),
    );
    const ran = await Promise.all(
      queued.map(async ([q]) => (await settled(client, 'cached', q!.key, 120_000)).result),
    );
    expect(ran).toEqual(Array(12).fill('a'));
  });
});
