// A job the worker killed for ZooKeeper's silence is a failed attempt, never its result: when
// the connection comes back before the session expires, the job runs again and its own result
// is what the record holds (not the worker's SIGKILL). The memory adapter with real timers (its
// server expires a disconnected session after the timeout, as ZooKeeper does), a daemon
// in-process, real processes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RaceJobResult, RegularJobResult } from '@zoott/core/jobs';
import { type MemoryCoordinator, MemoryServer, systemClock } from '@zoott/memory-adapter';
import { processesWith, SELF, settled, until } from '@zoott/testing';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { unheardLimitMs } from '../src/expiry-kill.js';
import { startWorkerDaemon, submitJob, submitRace, type WorkerDaemon } from '../src/internal.js';

const SESSION_MS = 10_000;

describe('a job killed for ZooKeeper silence', { timeout: 120_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'zoott-unheard-'));
  let daemon: WorkerDaemon | undefined;
  afterAll(async () => {
    await daemon?.kill();
    rmSync(work, { recursive: true, force: true });
  });

  /** A daemon on a memory session of its own; the client that submits, and the session. */
  async function open(world: string) {
    const server = new MemoryServer({ clock: systemClock });
    const worker = await server.connect({ sessionTimeoutMs: SESSION_MS });
    const client = await server.connect();
    await daemon?.kill();
    daemon = await startWorkerDaemon({
      coordinator: worker,
      createWorld: true,
      world,
      nodeId: `${world}-1`,
      allowExec: ['/bin/sh'],
      runAs: SELF,
      workDir: work,
      // Short: a race waits this (and 5 s) for every started racer to end, and the killed one
      // never records its end. The kill itself is a SIGKILL, no grace.
      killGraceMs: 1000,
      logger: pino({ level: 'silent' }),
    });
    await until('registration', () => daemon?.registryPath ?? undefined);
    return { worker, client };
  }

  /**
   * A first run that ignores SIGTERM and sleeps (carrying `mark`), a second that prints
   * `second` and ends; each run adds a line to `runs`.
   */
  const script = (mark: string) =>
    `echo run >> "$0"; if [ "$(wc -l < "$0")" -eq 1 ]; then trap '' TERM; sleep 60 ${mark}; fi; echo second`;

  /** Disconnects `worker` while the first run sleeps; once it is killed, reconnects. */
  async function silenceKills(worker: MemoryCoordinator, mark: string): Promise<void> {
    await until('the first run to sleep', () =>
      processesWith(mark).length > 0 ? true : undefined,
    );
    const cut = Date.now();
    worker.disconnect();
    await until(
      'the worker to kill the job',
      () => (processesWith(mark).length === 0 ? true : undefined),
      SESSION_MS,
    );
    const killedAfter = Date.now() - cut;
    expect(killedAfter).toBeGreaterThanOrEqual(unheardLimitMs(SESSION_MS) - 50);
    expect(killedAfter).toBeLessThan(SESSION_MS);
    worker.reconnect();
    expect(worker.state).toBe('connected');
  }

  it('a job runs again when the connection is back in time; its own result is recorded', async () => {
    const { worker, client } = await open('unheard');
    const mark = `0.000${process.pid}${Date.now() % 100_000}1`;
    const runs = join(work, 'job-runs');
    const { key } = await submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', script(mark), runs] },
      { world: 'unheard' },
    );
    await silenceKills(worker, mark);
    const rec = await settled(client, 'unheard', key);
    expect(rec.state).toBe('completed');
    const result = rec.result as RegularJobResult;
    expect(result.signal).toBeUndefined();
    expect(result.stdout).toBe('second\n');
    expect(readFileSync(runs, 'utf8')).toBe('run\nrun\n');
    await client.close();
  });

  it('a racer killed for it neither wins nor loses: the race runs again', async () => {
    const { worker, client } = await open('unheardrace');
    const mark = `0.000${process.pid}${Date.now() % 100_000}2`;
    const runs = join(work, 'race-runs');
    const { world, key } = await submitRace(
      client,
      { executable: '/bin/sh', arguments: ['-c', script(mark), runs], input: [{ data: 'x\n' }] },
      { world: 'unheardrace' },
    );
    await silenceKills(worker, mark);
    const rec = await settled(client, world, key);
    expect(rec.state).toBe('completed');
    const race = rec.result as RaceJobResult;
    const winner = race.winner;
    expect(race.processes).toBe(2);
    expect(winner?.signal).toBeUndefined();
    expect(winner?.stdout).toBe('second\n');
    expect(readFileSync(runs, 'utf8')).toBe('run\nrun\n');
    await client.close();
  });
});
