import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Coordinator } from '@zoott/core';
import { decodeJson } from '@zoott/core/internal';
import { submitJob } from '@zoott/jobs/internal';
import { freshNamespace, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  jobWorkerArgs,
  killWorkers,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

const WORLD = 'near';
const REGISTRY = `/zoott_workers/${WORLD}`;

/** Registry nodes: id -> the buckets its worker owns. */
async function registry(c: Coordinator): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const name of await c.children(REGISTRY).catch(() => [])) {
    const path = `${REGISTRY}/${name}`;
    const info = decodeJson<{ id: string; buckets: number[] }>((await c.get(path)).data, path);
    out.set(info.id, info.buckets);
  }
  return out;
}

describe('locality with two zoott-worker processes', { timeout: 240_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let dirA: string;
  let dirB: string;
  const procs = new Map<string, WorkerProcess>();
  let buckets = 0;

  const start = (id: string, dataDir: string, extra: string[]) => {
    const p = startWorker([
      ...jobWorkerArgs(ns, WORLD, id, '/bin/echo'),
      ...['--create-world', '--data-dir', dataDir],
      // Longer than the test: a job left to the holder is never taken by the other worker
      // while the holder is up, whatever the timing.
      ...['--locality-wait', '600000', '--session-timeout', '4000', '--log-level', 'warn'],
      ...extra,
    ]);
    procs.set(id, p);
  };

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dirA = mkdtempSync(join(tmpdir(), 'zoott-near-a-'));
    dirB = mkdtempSync(join(tmpdir(), 'zoott-near-b-'));
    mkdirSync(join(dirA, 'logs'));
    writeFileSync(join(dirA, 'logs', 'a.log'), 'held by node-a only\n');
    start('node-a', dirA, ['--datasets', 'sales,stock']);
    start('node-b', dirB, ['--datasets', 'stock']);
    // Each worker has read the other's registry node: they split the buckets between them.
    await until(
      'both workers to share the buckets',
      async () => {
        const r = await registry(client);
        const a = r.get('node-a') ?? [];
        const b = r.get('node-b') ?? [];
        // Disjoint: neither still shows what it owned before it saw the other.
        if (a.length === 0 || b.length === 0 || a.some((x) => b.includes(x))) return undefined;
        buckets = a.length + b.length;
        return true;
      },
      60_000,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${[...procs.values()].map((p) => p.output()).join('\n')}`);
    });
  });

  afterAll(async () => {
    await killWorkers(procs.values());
    await client?.close();
    rmSync(dirA, { recursive: true, force: true });
    rmSync(dirB, { recursive: true, force: true });
  });

  /** Submits 12 jobs with `hint` and returns the worker each ran on. */
  const runHinted = async (hint: Record<string, string>, tag: string) => {
    const keys = [];
    for (let i = 0; i < 12; i++)
      keys.push(
        await submitJob(
          client,
          { executable: '/bin/echo', arguments: [`${tag}${i}`], ...hint },
          { world: WORLD },
        ),
      );
    const ran: string[] = [];
    for (const { key } of keys) {
      const rec = await settled(client, WORLD, key, 120_000);
      expect(rec.state).toBe('completed');
      ran.push(rec.worker?.worker ?? '?');
    }
    return ran;
  };

  it('12 jobs hinted to a file only node-a holds all run on node-a', async () => {
    expect(await runHinted({ filename: 'logs/a.log' }, 'f')).toEqual(Array(12).fill('node-a'));
  });

  it('12 jobs hinted to a dataset only node-a caches all run on node-a', async () => {
    expect(await runHinted({ dataset: 'sales' }, 'd')).toEqual(Array(12).fill('node-a'));
  });

  it('with node-a gone, a job hinted to its file runs on node-b at once', async () => {
    const a = procs.get('node-a')!;
    a.child.kill('SIGTERM');
    await a.exited;
    await until('node-b to hold every bucket', async () => {
      const r = await registry(client);
      return r.size === 1 && r.get('node-b')?.length === buckets ? true : undefined;
    });
    // The wait is 10 minutes: only "no live worker may hold it" lets node-b take it now.
    const { key } = await submitJob(
      client,
      { executable: '/bin/echo', arguments: ['orphan'], filename: 'logs/a.log' },
      { world: WORLD },
    );
    const rec = await settled(client, WORLD, key, 120_000);
    expect(rec.state).toBe('completed');
    expect(rec.worker?.worker).toBe('node-b');
  });
});
