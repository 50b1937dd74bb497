import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { decodeJson } from '@zoott/core/internal';
import { parentDeathTool, submitJob, waitForResult } from '@zoott/jobs/internal';
import { freshNamespace, killMarked, processesWith, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  jobWorkerArgs,
  killWorkers,
  registered,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

describe('the zoott-worker process', { timeout: 180_000 }, () => {
  let ns: string;
  let client: Coordinator;
  const started: WorkerProcess[] = [];
  const marker = `zoott-test-${randomUUID()}`;

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
  });

  afterEach(async () => {
    await killWorkers(started.splice(0));
    // A SIGKILLed worker cannot stop its job: reap the orphan here.
    killMarked(marker);
  });

  afterAll(async () => {
    await client?.close();
  });

  const base = (world: string, id: string) => [
    ...jobWorkerArgs(ns, world, id),
    ...['--session-timeout', '4000', '--create-world'],
  ];

  it('--help documents every flag, and a bad setting exits 2 with a clear message', async () => {
    const help = startWorker(['--help']);
    expect((await help.exited).code).toBe(0);
    for (const flag of [
      '--connect',
      '--auth',
      '--world',
      '--types',
      '--concurrency',
      '--node-id',
      '--handlers',
      '--data-dir',
      '--metrics-port',
      '--log-level',
      '--allow-exec',
      '--run-as',
      '--pass-env',
      '--config',
    ])
      expect(help.output()).toContain(flag);
    const bad = startWorker(['--connect', ns, '--concurrency', 'many']);
    expect((await bad.exited).code).toBe(2);
    expect(bad.output()).toMatch(/--concurrency: must be a whole number/);
  });

  it('registers itself with its JSON', async () => {
    const d = startWorker(base('reg', 'reg-1'));
    started.push(d);
    await registered(client, 'reg', 1);
    const [name] = await client.children('/zoott_workers/reg');
    const info = decodeJson<Record<string, unknown>>(
      (await client.get(`/zoott_workers/reg/${name}`)).data,
      'registry',
    );
    expect(info).toMatchObject({ id: 'reg-1', server: 'reg-1', pid: d.child.pid, version: 1 });
    expect(info.types).toEqual(['zoott.job', 'zoott.race', 'zoott.racer']);
    expect(Array.isArray(info.buckets)).toBe(true);
    expect(typeof info.started).toBe('number');
  });

  it('SIGTERM during a long job: the job finishes, then the worker exits 0', async () => {
    const d = startWorker(base('term', 'term-1'));
    started.push(d);
    await registered(client, 'term', 1);
    const { key } = await submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', 'sleep 3; echo finished', marker] },
      { world: 'term' },
    );
    const engine = createEngine(client, { world: 'term' });
    await until('the job to start', async () =>
      (await engine.task(key))?.state === 'working' ? true : undefined,
    );
    d.child.kill('SIGTERM');
    const exit = await d.exited;
    expect(exit, d.output()).toEqual({ code: 0, signal: null });
    const rec = await settled(client, 'term', key);
    expect(rec.state).toBe('completed');
    expect((rec.result as { stdout: string }).stdout).toBe('finished\n');
    expect(d.output()).toContain('"msg":"stopped"');
  });

  it('a worker killed with SIGKILL mid-job: the job runs again elsewhere and completes once', async () => {
    const a = startWorker(base('crash', 'crash-a'));
    const b = startWorker(base('crash', 'crash-b'));
    started.push(a, b);
    await registered(client, 'crash', 2);
    const routingkey = `crash-${randomUUID()}`;
    const { key } = await submitJob(
      client,
      {
        executable: '/bin/sh',
        arguments: ['-c', 'sleep 2; echo done', marker],
        routingkey,
      },
      { world: 'crash' },
    );
    const engine = createEngine(client, { world: 'crash' });
    const first = await until('the job to start', async () => {
      const t = await engine.task(key);
      return t?.state === 'working' ? t.worker?.worker : undefined;
    });
    const [victim, survivor] = first === 'crash-a' ? [a, b] : [b, a];
    victim.child.kill('SIGKILL');
    const rec = await settled(client, 'crash', key, 90_000);
    expect(rec.state).toBe('completed');
    expect(rec.attempts).toBe(2);
    expect(rec.worker?.worker).toBe(first === 'crash-a' ? 'crash-b' : 'crash-a');
    expect(survivor.child.exitCode).toBeNull();
    const reply = await waitForResult(client, { world: 'crash', routingkey, timeoutMs: 30_000 });
    expect((reply.result as { stdout: string }).stdout).toBe('done\n');
    // Exactly one result was published: the directory is empty once it is consumed.
    expect(await client.children(`/zoott_~replies/crash/_default/${routingkey}`)).toEqual([]);
    // The killed worker's job died with it (parent-death signal); its `sleep` child ends on
    // its own; nothing is left behind.
    await until('no job process left', () =>
      processesWith(marker).length === 0 ? true : undefined,
    );
  });

  it('a second signal kills the job processes and exits at once', async () => {
    const d = startWorker([...base('twice', 'twice-1'), '--grace', '600000']);
    started.push(d);
    await registered(client, 'twice', 1);
    await submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', 'sleep 120', marker] },
      { world: 'twice' },
    );
    await until('the job process', () => (processesWith(marker).length > 0 ? true : undefined));
    d.child.kill('SIGTERM');
    await until('the first signal to be handled', () =>
      d.output().includes('stopping: no new claims') ? true : undefined,
    );
    d.child.kill('SIGTERM');
    expect((await d.exited).code).toBe(143);
    await until('no job process left', () =>
      processesWith(marker).length === 0 ? true : undefined,
    );
  });

  it('a worker killed with SIGKILL takes its running job with it', async () => {
    // The kernel's parent-death signal (set through util-linux setpriv) does this; without
    // it the job below would outlive its worker by five minutes and run beside its re-run.
    expect(parentDeathTool(), 'util-linux setpriv with --pdeathsig').not.toBeNull();
    const d = startWorker(base('orphan', 'orphan-1'));
    started.push(d);
    await registered(client, 'orphan', 1);
    await submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', 'sleep 300', marker] },
      { world: 'orphan' },
    );
    const [pid] = await until('the job process', () => {
      const pids = processesWith(marker);
      return pids.length > 0 ? pids : undefined;
    });
    d.child.kill('SIGKILL');
    await d.exited;
    await until(
      'the job to die with its worker',
      () => (processesWith(marker).length === 0 ? true : undefined),
      20_000,
    );
    expect(pid).toBeGreaterThan(0);
  });

  it('serves custom task types from a --handlers module', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zoott-handlers-'));
    try {
      const file = join(dir, 'handlers.mjs');
      writeFileSync(
        file,
        'export function greet(task) { return { hello: task.data.name, attempt: task.attempt }; }\n',
      );
      const d = startWorker([
        '--connect',
        ns,
        '--world',
        'custom',
        '--create-world',
        '--handlers',
        file,
      ]);
      started.push(d);
      await registered(client, 'custom', 1);
      const engine = createEngine(client, { world: 'custom' });
      const [queued] = await engine.queue({ name: 'g1', type: 'greet', data: { name: 'zoott' } });
      const rec = await settled(client, 'custom', queued!.key);
      expect(rec.result).toEqual({ hello: 'zoott', attempt: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
