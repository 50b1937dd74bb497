import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { connectZk, killSession, type ZkCoordinator } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorkerDaemon, submitJob, type WorkerDaemon } from '../src/index.js';
import { freshNamespace, settled, until } from './helpers.js';
import { runningGroupMembers } from './jobs/proc-helpers.js';

describe('session lost', { timeout: 180_000 }, () => {
  let client: Coordinator;
  let daemon: WorkerDaemon;
  let work: string;

  beforeAll(async () => {
    const ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    work = mkdtempSync(join(tmpdir(), 'zoott-lost-'));
    daemon = await startWorkerDaemon({
      connect: ns,
      createWorld: true,
      world: 'lost',
      nodeId: 'lost-1',
      allowExec: ['/bin/sh'],
      workDir: work,
      killGraceMs: 500,
      sessionTimeoutMs: 4000,
      logLevel: (process.env.ZOOTT_TEST_LOG as 'silent' | undefined) ?? 'silent',
    });
  });

  afterAll(async () => {
    await daemon?.stop();
    await client?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('kills the running job, records nothing, re-registers and runs the task again', async () => {
    await until('registration', () => daemon.registryPath ?? undefined);
    const firstRegistration = daemon.registryPath;
    // First run: leaves a flag and sleeps; the second run (after the session is lost) ends.
    const { key } = await submitJob(
      client,
      {
        executable: '/bin/sh',
        arguments: ['-c', 'if [ -e flag ]; then echo second; else touch flag; sleep 120; fi'],
      },
      { world: 'lost' },
    );
    const engine = createEngine(client, { world: 'lost' });
    // Started, and past its `touch flag`: killed before that, the second run would sleep too.
    await until('the job to start', async () =>
      (await engine.task(key))?.state === 'working' &&
      daemon.processes.size === 1 &&
      existsSync(join(work, 'flag'))
        ? true
        : undefined,
    );
    const [pid] = [...daemon.processes];
    await killSession(daemon.coordinator as ZkCoordinator);
    await until('the first process group to be killed', () =>
      runningGroupMembers(pid!).length === 0 ? true : undefined,
    );
    const rec = await settled(client, 'lost', key);
    expect(rec.state).toBe('completed');
    expect(rec.attempts).toBe(2);
    expect((rec.result as { stdout: string }).stdout).toBe('second\n');
    expect(daemon.registryPath).not.toBeNull();
    expect(daemon.registryPath).not.toBe(firstRegistration);
    expect(await client.children('/zoott_workers/lost')).toHaveLength(1);
  });
});
