/**
 * A result that can never fit is not retried: a cap below what a result needs is refused
 * when the setting is read, and a job whose own fields leave no room under the cap fails
 * for good on its first attempt, before its process starts. The shipped binary on a real
 * ZooKeeper.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import {
  MAX_OUTPUT_CAP_BYTES,
  MIN_OUTPUT_CAP_BYTES,
  resolveSettings,
  submitJob,
  submitRace,
} from '@zoott/jobs/internal';
import { freshNamespace, settled } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  jobWorkerArgs,
  killWorkers,
  registered,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

describe('the result cap setting', () => {
  it('is refused below the smallest cap that holds a result, naming it', () => {
    expect(MIN_OUTPUT_CAP_BYTES).toBe(1024);
    expect(() => resolveSettings({ flags: { maxOutputBytes: '1023' } })).toThrow(
      /maxOutputBytes \(--max-output\): must be 1024\.\.786432 bytes, got 1023 \(the smallest cap that holds a job result is 1024\)/,
    );
    expect(() => resolveSettings({ env: { ZOOTT_MAX_OUTPUT_BYTES: '0' } })).toThrow(
      /smallest cap that holds a job result is 1024/,
    );
    expect(resolveSettings({ flags: { maxOutputBytes: '1024' } }).maxOutputBytes).toBe(1024);
  });

  it('is refused above what a ZooKeeper record can hold', () => {
    expect(() => resolveSettings({ file: { maxOutputBytes: MAX_OUTPUT_CAP_BYTES + 1 } })).toThrow(
      /would not fit in its ZooKeeper record/,
    );
  });
});

describe('the zoott-worker binary with a small --max-output [zookeeper]', {
  timeout: 120_000,
}, () => {
  let ns: string;
  let client: Coordinator;
  let dir: string;
  let worker: WorkerProcess | undefined;
  const world = 'cap';

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    await createEngine(client, { world }).init();
    dir = mkdtempSync(join(tmpdir(), 'zoott-cap-'));
  });
  afterAll(async () => {
    if (worker) await killWorkers([worker]);
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--max-output 200 exits 2 naming the minimum, instead of failing every job', async () => {
    const bad = startWorker(['--connect', ns, '--allow-exec', '/usr/bin/*', '--max-output', '200']);
    expect((await bad.exited).code).toBe(2);
    expect(bad.output()).toMatch(
      /--max-output.*got 200.*smallest cap that holds a job result is 1024/,
    );
  });

  it('at the minimum cap a job completes; one whose fields cannot fit fails at once, unrun', async () => {
    worker = startWorker([
      ...jobWorkerArgs(ns, world, 'cap-1', '/usr/bin/*'),
      ...['--max-output', String(MIN_OUTPUT_CAP_BYTES), '--data-dir', dir],
    ]);
    await registered(client, world, 1, worker);

    const small = await submitJob(
      client,
      { executable: '/usr/bin/seq', arguments: ['1', '100000'] },
      { world },
    );
    const ok = await settled(client, world, small.key);
    expect(ok.state, worker.output()).toBe('completed');
    const r = ok.result as RegularJobResult;
    expect(r.exit).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.stdout.startsWith('1\n2\n3\n')).toBe(true);

    const marker = join(dir, 'ran');
    const big = await submitJob(
      client,
      { executable: '/usr/bin/touch', arguments: [marker], note: 'x'.repeat(2000) },
      { world },
    );
    const failed = await settled(client, world, big.key);
    expect(failed.state).toBe('failed');
    expect(failed.attempts).toBe(1);
    expect(failed.error?.code).toBe('DATA_TOO_LARGE');
    expect(failed.error?.message).toMatch(/--max-output of 1024 bytes; shorten them or raise/);
    expect(existsSync(marker)).toBe(false);

    // The pre-flight passes, but the real result carries an `error` naming the (missing)
    // executable twice, which leaves no room: still permanent, on the first attempt.
    const missing = `/usr/bin/${'n'.repeat(200)}/${'m'.repeat(200)}`;
    const noRoom = await submitJob(client, { executable: missing }, { world });
    const noRoomRec = await settled(client, world, noRoom.key);
    expect(noRoomRec.state).toBe('failed');
    expect(noRoomRec.attempts).toBe(1);
    expect(noRoomRec.error?.code).toBe('DATA_TOO_LARGE');

    const race = await submitRace(
      client,
      {
        executable: '/usr/bin/touch',
        arguments: [marker],
        input: [{ data: 'a\n' }],
        note: 'y'.repeat(2000),
      },
      { world },
    );
    const raceFailed = await settled(client, race.world, race.key);
    expect(raceFailed.state).toBe('failed');
    expect(raceFailed.attempts).toBe(1);
    expect(raceFailed.error?.code).toBe('DATA_TOO_LARGE');
    expect(existsSync(marker)).toBe(false);
  });
});
