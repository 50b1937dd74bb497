// A lost session means the claim is gone: another worker may start the job any moment, so
// the job is SIGKILLed at once, not given --kill-grace to end (a cancel or a timeout is).
// The daemon in-process on a real ZooKeeper, its session expired by the server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { freshNamespace, processesWith, SELF, until } from '@zoott/testing';
import { connectZk, killSession, type ZkCoordinator } from '@zoott/zk-adapter';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorkerDaemon, submitJob, submitRace, type WorkerDaemon } from '../src/internal.js';

const GRACE_MS = 120_000;

describe('a lost session kills its jobs at once', { timeout: 120_000 }, () => {
  let client: Coordinator;
  let daemon: WorkerDaemon;
  let work: string;
  // A number: `sleep` adds it to its duration, so the job's processes carry it.
  const marker = `0.000${process.pid}${Date.now() % 100_000}`;

  beforeAll(async () => {
    const ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    work = mkdtempSync(join(tmpdir(), 'zoott-lostkill-'));
    daemon = await startWorkerDaemon({
      connect: ns,
      createWorld: true,
      world: 'lostkill',
      nodeId: 'lostkill-1',
      allowExec: ['/bin/sh'],
      runAs: SELF,
      workDir: work,
      killGraceMs: GRACE_MS,
      sessionTimeoutMs: 4000,
      // The first test's job runs again after the lost session: the racer needs a slot too.
      concurrency: 4,
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await daemon?.kill();
    await client?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('without waiting for a job that ignores SIGTERM', async () => {
    await until('registration', () => daemon.registryPath ?? undefined);
    await submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', `trap '' TERM; sleep 120 ${marker}`] },
      { world: 'lostkill' },
    );
    const engine = createEngine(client, { world: 'lostkill' });
    await until('the job to run', async () =>
      processesWith(marker).length > 0 && (await engine.counts()).working === 1 ? true : undefined,
    );
    await killSession(daemon.coordinator as ZkCoordinator);
    // Far sooner than the grace a SIGTERM would have been given.
    await until(
      'the job to be killed',
      () => (processesWith(marker).length === 0 ? true : undefined),
      GRACE_MS / 4,
    );
    expect(processesWith(marker)).toEqual([]);
  });

  it('a racer too', async () => {
    await until('registration', () => daemon.registryPath ?? undefined);
    const racer = `${marker}1`;
    await submitRace(
      client,
      {
        executable: '/bin/sh',
        arguments: ['-c', `trap '' TERM; sleep 120 ${racer}`],
        input: [{ data: 'x\n' }],
      },
      { world: 'lostkill' },
    );
    await until('the racer to run', () => (processesWith(racer).length > 0 ? true : undefined));
    await killSession(daemon.coordinator as ZkCoordinator);
    await until(
      'the racer to be killed',
      () => (processesWith(racer).length === 0 ? true : undefined),
      GRACE_MS / 4,
    );
  });
});
