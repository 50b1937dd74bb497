/**
 * `--types`, `--session-timeout`, `--pass-env` and `--work-dir` by their effect on the
 * shipped binary and a real ZooKeeper: the task types the worker registers to serve, the
 * timeout ZooKeeper holds for its session, and the environment and directory a job gets.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { decodeJson } from '@zoott/core/internal';
import { submitJob } from '@zoott/jobs/internal';
import { freshNamespace, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { fourLetter } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobWorkerArgs, killWorkers, startWorker, type WorkerProcess } from './worker-bin.js';

const WORLD = 'served';

describe('zoott-worker --types, --session-timeout, --pass-env and --work-dir [zookeeper]', {
  timeout: 120_000,
}, () => {
  let client: Coordinator;
  let worker: WorkerProcess | undefined;
  // Real path: what `pwd` prints in a job.
  const workDir = realpathSync(mkdtempSync(join(tmpdir(), 'zoott-work-dir-')));

  beforeAll(async () => {
    const ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    await createEngine(client, { world: WORLD }).init();
    const w = startWorker(
      [
        ...jobWorkerArgs(ns, WORLD, 'served-1'),
        ...['--types', 'zoott.job', '--pass-env', 'FLAGS_TEST_PASSED'],
        // Not the default (10000): what ZooKeeper holds for the session shows where it came from.
        ...['--session-timeout', '7321', '--work-dir', workDir],
      ],
      { env: { FLAGS_TEST_PASSED: 'passed', FLAGS_TEST_KEPT: 'kept' } },
    );
    worker = w;
    await until('the worker to start', () => {
      if (w.child.exitCode !== null) throw new Error(`worker exited:\n${w.output()}`);
      return w.output().includes('"msg":"worker started"') ? true : undefined;
    });
  });
  afterAll(async () => {
    if (worker) await killWorkers([worker]);
    await client?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  /** The worker's registry node, once it is there. */
  const registration = async () => {
    const registry = `/zoott_workers/${WORLD}`;
    const [name] = await until('its registration', async () => {
      const names = await client.children(registry).catch(() => []);
      return names.length > 0 ? names : undefined;
    });
    return client.get(`${registry}/${name}`);
  };

  it('--types zoott.job: it registers to serve that type alone', async () => {
    const info = decodeJson<{ types: string[] }>((await registration()).data, 'registry');
    expect(info.types).toEqual(['zoott.job']);
  });

  it('--session-timeout: ZooKeeper holds the worker session with that timeout', async () => {
    const sid = (await registration()).stat.ephemeralOwner;
    expect(sid).not.toBeNull();
    // `cons` lists every connection with its session id and negotiated timeout.
    const line = (await fourLetter(inject('zkConnect'), 'cons'))
      .split('\n')
      .find((l) => l.includes(`sid=0x${sid!.replace(/^0+/, '')}`));
    expect(line).toMatch(/[(,]to=7321[,)]/);
  });

  it('--pass-env: a job sees the variable named, not the others of the worker', async () => {
    const { key } = await submitJob(
      client,
      {
        executable: '/bin/sh',
        arguments: ['-c', 'printenv FLAGS_TEST_PASSED; printenv FLAGS_TEST_KEPT || echo unset'],
      },
      { world: WORLD },
    );
    const rec = await settled(client, WORLD, key);
    expect(rec.state, worker?.output()).toBe('completed');
    expect((rec.result as { stdout: string }).stdout).toBe('passed\nunset\n');
  });

  it('--work-dir: a job runs in that directory', async () => {
    const { key } = await submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', 'pwd'] },
      { world: WORLD },
    );
    const rec = await settled(client, WORLD, key);
    expect(rec.state, worker?.output()).toBe('completed');
    expect((rec.result as { stdout: string }).stdout).toBe(`${workDir}\n`);
  });
});
