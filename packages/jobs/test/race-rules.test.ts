import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Coordinator } from '@zoott/core';
import { type RaceJobResult, validateRaceJob } from '@zoott/core/jobs';
import { freshNamespace, SELF, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { removeRaceInputDir } from '../src/handlers/race-input.js';
import { startWorkerDaemon, submitRace, type WorkerDaemon } from '../src/internal.js';

const WORLD = 'rules';

describe('race rules of the spec', { timeout: 180_000 }, () => {
  let client: Coordinator;
  let dataDir: string;
  let daemon: WorkerDaemon;

  beforeAll(async () => {
    const ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dataDir = mkdtempSync(join(tmpdir(), 'zoott-race-rules-'));
    daemon = await startWorkerDaemon({
      connect: ns,
      createWorld: true,
      world: WORLD,
      concurrency: 8,
      allowExec: ['/usr/bin/grep', '/bin/sh'],
      runAs: SELF,
      dataDir,
      killGraceMs: 1000,
      logLevel: 'silent',
    });
  });

  afterAll(async () => {
    await daemon?.stop();
    await client?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const race = async (job: Record<string, unknown>): Promise<RaceJobResult> => {
    const { key, world } = await submitRace(client, job, { world: WORLD });
    const rec = await settled(client, world, key, 120_000);
    expect(rec.state, JSON.stringify(rec.error)).toBe('completed');
    return rec.result as RaceJobResult;
  };

  it('a grep race is won by the matching input: a silent exit 1 is a normal end', async () => {
    const result = await race({
      executable: '/usr/bin/grep',
      arguments: ['needle'],
      input: [
        { data: 'hay\n' },
        { data: 'more hay\n' },
        { data: 'straw\n' },
        { data: 'a needle\n' },
        { data: 'hay again\n' },
      ],
    });
    expect(result.winner).toMatchObject({ stdin: 'a needle\n', stdout: 'a needle\n', exit: 0 });
  });

  it('every racer exits non-zero and silently: no winner by default, the first with nonZeroExitWins', async () => {
    const job = {
      executable: '/bin/sh',
      arguments: ['-c', 'exit 3'],
      input: [{ data: 'a' }, { data: 'b' }],
    };
    const plain = await race(job);
    expect(plain.winner).toBeNull();
    expect(plain.processes).toBe(2);
    const strict = await race({ ...job, nonZeroExitWins: true });
    expect(strict.winner?.exit).toBe(3);
    expect(strict.nonZeroExitWins).toBe(true);
  });

  it('a killed racer still wins: a signal is not a normal end', async () => {
    const result = await race({
      executable: '/bin/sh',
      arguments: ['-c', 'read x; if [ "$x" = die ]; then kill -9 $$; fi'],
      input: [{ data: 'ok\n' }, { data: 'die\n' }, { data: 'ok\n' }],
    });
    expect(result.winner).toMatchObject({ stdin: 'die\n', signal: 9 });
    expect(result.winner).not.toHaveProperty('exit');
  });

  it('nonZeroExitWins must be a boolean', () => {
    expect(() =>
      validateRaceJob({ executable: 'x', input: [{ data: '' }], nonZeroExitWins: 'yes' }),
    ).toThrow(/nonZeroExitWins: must be true or false/);
  });

  it('removes the input directory once the race result is recorded', async () => {
    mkdirSync(join(dataDir, 'in-1'));
    writeFileSync(join(dataDir, 'in-1', 'a'), 'hay\nneedle\n');
    writeFileSync(join(dataDir, 'in-1', 'b'), 'hay\n');
    const result = await race({
      executable: '/usr/bin/grep',
      arguments: ['needle'],
      input: 'in-1',
    });
    expect(result.winner?.stdout).toBe('needle\n');
    // Removed after the completion, by the worker that recorded it.
    await until('the input directory to be removed', () =>
      existsSync(join(dataDir, 'in-1')) ? undefined : true,
    );
  });

  it('removes nothing outside the data directory, and never follows a link', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'zoott-race-outside-'));
    try {
      writeFileSync(join(outside, 'keep'), 'x');
      symlinkSync(outside, join(dataDir, 'link'));
      expect(await removeRaceInputDir(dataDir, 'link')).toMatchObject({ kept: expect.any(String) });
      expect(await removeRaceInputDir(dataDir, '../x')).toMatchObject({
        reason: 'not inside the data directory',
      });
      expect(await removeRaceInputDir(dataDir, '.')).toMatchObject({
        reason: 'not inside the data directory',
      });
      expect(await removeRaceInputDir(dataDir, outside)).toMatchObject({
        reason: 'not a relative path',
      });
      expect(existsSync(join(outside, 'keep'))).toBe(true);
      expect(existsSync(dataDir)).toBe(true);
    } finally {
      rmSync(outside, { recursive: true, force: true });
      rmSync(join(dataDir, 'link'), { force: true });
    }
  });
});
