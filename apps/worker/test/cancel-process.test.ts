import { type Coordinator, createEngine } from '@zoott/core';
import { submitJob } from '@zoott/jobs/internal';
import { freshNamespace, killMarked, processesWith, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  jobWorkerArgs,
  killWorkers,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

// Cancelling a running job on the built daemon and a real ZooKeeper: the job's whole process
// group goes, and nothing is recorded for it.

describe('cancel of a running job', { timeout: 120_000 }, () => {
  let ns: string;
  let client: Coordinator;
  const children: WorkerProcess[] = [];
  // A number, so `sleep` takes it as one more (tiny) duration: every process of the job
  // carries it in its command line.
  const marker = `0.000${process.pid}${Date.now() % 100_000}`;

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
  });

  afterEach(async () => {
    await killWorkers(children.splice(0));
    killMarked(marker);
  });

  afterAll(async () => {
    await client?.close();
  });

  it('stops the process group of a `sleep 60` job and records nothing', async () => {
    const world = 'cancelled';
    const worker = startWorker([...jobWorkerArgs(ns, world, 'cancel-w'), '--create-world']);
    children.push(worker);
    const { key } = await submitJob(
      client,
      // A leader with a background child: the whole group must go, not only the leader.
      { executable: '/bin/sh', arguments: ['-c', `sleep 60 ${marker} & sleep 60 ${marker}; wait`] },
      { world },
    );
    await until('the job processes', () => {
      const p = processesWith(marker);
      return p.length >= 3 ? true : undefined;
    });
    const engine = createEngine(client, { world });
    expect((await engine.task(key))?.state).toBe('working');

    expect(await engine.cancel(key)).toEqual([key]);
    await until('every process of the job to be gone', () =>
      processesWith(marker).length === 0 ? true : undefined,
    );
    await until('the worker to log the cancellation', () =>
      /task cancelled while running; result dropped/.test(worker.output()) ? true : undefined,
    );
    expect(await engine.task(key)).toBeNull();
    expect(await engine.counts()).toMatchObject({ pending: 0, working: 0, completed: 0 });
    expect(worker.output()).not.toMatch(/"msg":"task completed"/);
  });
});
