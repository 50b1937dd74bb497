import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Coordinator, createEngine } from '@zoott/core';
import { freshNamespace, runningGroupMembers, SELF, settled, until } from '@zoott/testing';
import { connectZk, killSession, type ZkCoordinator } from '@zoott/zk-adapter';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorkerDaemon, submitJob, type WorkerDaemon } from '../src/internal.js';

describe('session lost', { timeout: 180_000 }, () => {
  let client: Coordinator;
  let daemon: WorkerDaemon;
  let work: string;
  const logLines: Record<string, unknown>[] = [];

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
      runAs: SELF,
      workDir: work,
      killGraceMs: 500,
      sessionTimeoutMs: 4000,
      // The daemon's own log lines, kept to check what an operator reads.
      logger: pino(
        { level: 'info', base: { nodeId: 'lost-1' } },
        new Writable({
          write(chunk: Buffer, _enc, done) {
            for (const line of chunk.toString().split('\n'))
              if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
            done();
          },
        }),
      ),
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
    // The log tells it: one line per transition of the task (the last one may trail the record).
    await until('the completion line', () =>
      logLines.some((l) => l.key === key.join('|') && l.msg === 'task completed')
        ? true
        : undefined,
    );
    expect(
      logLines
        .filter((l) => l.key === key.join('|'))
        .map((l) => [l.msg, l.attempt, l.reason ?? null]),
    ).toEqual([
      ['task started', 1, null],
      ['task result dropped (claim no longer held)', 1, 'session lost'],
      ['task started', 2, null],
      ['task completed', 2, null],
    ]);
  });
});
