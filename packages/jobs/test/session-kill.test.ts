// A lost session means the claim is gone: another worker may start the job any moment, so
// the job is SIGKILLed at once, not given --kill-grace to end (a cancel or a timeout is).
// A daemon in-process on a real ZooKeeper per test, its session expired by the server.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Coordinator } from '@zoott/core';
import { freshNamespace, processesWith, SELF, until } from '@zoott/testing';
import { connectZk, killSession, type ZkCoordinator } from '@zoott/zk-adapter';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, inject, it } from 'vitest';
import { startWorkerDaemon, submitJob, submitRace, type WorkerDaemon } from '../src/internal.js';

const GRACE_MS = 120_000;

describe('a lost session kills its jobs at once', { timeout: 120_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let work: string;
  let daemon: WorkerDaemon | undefined;
  // A number: `sleep` adds it to its duration, so the job's processes carry it.
  const marker = `0.000${process.pid}${Date.now() % 100_000}`;

  beforeAll(async () => {
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    work = mkdtempSync(join(tmpdir(), 'zoott-lostkill-'));
  });
  afterEach(async () => {
    await daemon?.kill();
    daemon = undefined;
  });
  afterAll(async () => {
    await client?.close();
    rmSync(work, { recursive: true, force: true });
  });

  async function start(world: string): Promise<WorkerDaemon> {
    daemon = await startWorkerDaemon({
      connect: ns,
      createWorld: true,
      world,
      nodeId: `${world}-1`,
      allowExec: ['/bin/sh'],
      runAs: SELF,
      workDir: work,
      killGraceMs: GRACE_MS,
      sessionTimeoutMs: 4000,
      logger: pino({ level: 'silent' }),
    });
    await until('registration', () => daemon?.registryPath ?? undefined);
    return daemon;
  }

  /**
   * Whether the job's `sleep` runs: its shell starts it after the trap, so SIGTERM is ignored
   * from then on (a SIGTERM before the trap would end the job and prove nothing).
   */
  function sleeping(mark: string): true | undefined {
    for (const pid of processesWith(mark))
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0')) return true;
      } catch {
        // gone meanwhile
      }
    return undefined;
  }

  /**
   * Expires the daemon's session; the processes that carried `mark` then must be gone far
   * within the grace. Those processes only: the new session may claim the task again and
   * start it anew, which is its right.
   */
  async function lostKills(d: WorkerDaemon, mark: string): Promise<void> {
    await until('the job to ignore SIGTERM', () => sleeping(mark));
    const old = processesWith(mark);
    await killSession(d.coordinator as ZkCoordinator);
    await until(
      'the job to be killed',
      () => (old.some((pid) => processesWith(mark).includes(pid)) ? undefined : true),
      GRACE_MS / 4,
    );
  }

  it('a job that ignores SIGTERM', async () => {
    const d = await start('lostjob');
    const mark = `${marker}1`;
    await submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', `trap '' TERM; sleep 120 ${mark}`] },
      { world: 'lostjob' },
    );
    await lostKills(d, mark);
  });

  it('a racer that ignores SIGTERM', async () => {
    const d = await start('lostrace');
    const mark = `${marker}2`;
    await submitRace(
      client,
      {
        executable: '/bin/sh',
        arguments: ['-c', `trap '' TERM; sleep 120 ${mark}`],
        input: [{ data: 'x\n' }],
      },
      { world: 'lostrace' },
    );
    await lostKills(d, mark);
  });
});
