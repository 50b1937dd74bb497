/**
 * The job runner's security switch, with the real `zoott-worker` binary on a real
 * ZooKeeper: running executables is off unless `--allow-exec` lists them, and with a list
 * only the listed executables run.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { promisify } from 'node:util';
import { type Coordinator, createEngine, type Engine } from '@zoott/core';
import { submitJob } from '@zoott/jobs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WORKER_BIN } from './support/chaos-run.js';
import { until, type ZkNamespace, zkNamespace } from './support/zk.js';

const run = promisify(execFile);
const WORLD = 'jobs';
const quiet = { warn: () => {} };
const HANDLERS = new URL('./support/chaos-handlers.mjs', import.meta.url).pathname;

describe('job runner: off by default, --allow-exec list [zookeeper, zoott-worker binary]', () => {
  let ns: ZkNamespace;
  let producer: Coordinator;
  let engine: Engine;

  beforeEach(async () => {
    expect(existsSync(WORKER_BIN), `${WORKER_BIN}: run pnpm build first`).toBe(true);
    ns = await zkNamespace();
    producer = await ns.connect();
    engine = createEngine(producer, { world: WORLD, buckets: 2, logger: quiet });
    await engine.init();
  });
  afterEach(async () => {
    engine.close();
    await ns.cleanup();
  });

  /** Runs the daemon until `done` holds, then stops it with SIGTERM; returns its output. */
  async function daemon(args: string[], done: () => Promise<boolean>): Promise<string> {
    const proc = spawn(
      process.execPath,
      // Jobs run as the test's own user (a root worker needs to be told).
      [
        WORKER_BIN,
        '--connect',
        ns.connectString,
        '--world',
        WORLD,
        '--run-as',
        userInfo().username,
        ...args,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ZOOTT_CHAOS_LOG: '/dev/null' },
      },
    );
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
    try {
      await until('the daemon reached the expected state', done, 30_000);
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    return out;
  }

  it('without --allow-exec, asking for the job type is a configuration error (exit 2)', async () => {
    const err = await run(process.execPath, [
      WORKER_BIN,
      '--connect',
      ns.connectString,
      '--world',
      WORLD,
      '--types',
      'zoott.job',
    ]).then(
      () => null,
      (e: { code: number; stderr: string; stdout: string }) => e,
    );
    expect(err?.code).toBe(2);
    expect(`${err?.stderr}${err?.stdout}`).toContain('--allow-exec');
  });

  it('without --allow-exec, a job is never run: it stays pending while other work is done', async () => {
    await submitJob(
      producer,
      { executable: '/usr/bin/touch', arguments: ['/tmp/zoott-should-not-exist'] },
      { world: WORLD, name: 'job' },
    );
    await engine.queue({ name: 'plain', type: 'chaos' });
    const out = await daemon(
      ['--handlers', HANDLERS, '--log-level', 'info'],
      async () => (await engine.task(['plain']))?.state === 'completed',
    );
    expect(out).toContain('are not served');
    expect((await engine.task(['job']))?.state).toBe('pending');
    expect(existsSync('/tmp/zoott-should-not-exist')).toBe(false);
  });

  it('with --allow-exec, listed executables run and others fail at once with INVALID_JOB', async () => {
    const ok = await submitJob(
      producer,
      { executable: '/usr/bin/echo', arguments: ['hi'] },
      { world: WORLD, name: 'echo' },
    );
    const refused = await submitJob(
      producer,
      { executable: '/usr/bin/env', arguments: [] },
      { world: WORLD, name: 'env' },
    );
    const viaPath = await submitJob(
      producer,
      { executable: 'echo', arguments: ['path'] },
      { world: WORLD, name: 'via-path' },
    );
    await daemon(['--allow-exec', '/usr/bin/echo', '--log-level', 'warn'], async () => {
      const states = await Promise.all(
        [ok, refused, viaPath].map(async (j) => (await engine.task(j.key))?.state),
      );
      return states.every((s) => s === 'completed' || s === 'failed');
    });
    const echo = await engine.task(ok.key);
    expect(echo?.state).toBe('completed');
    expect((echo?.result as { stdout?: string } | undefined)?.stdout).toBe('hi\n');
    const env = await engine.task(refused.key);
    expect(env?.state).toBe('failed');
    expect(env?.error?.code).toBe('INVALID_JOB');
    expect(env?.error?.message).toContain('/usr/bin/env');
    // A bare name is resolved on PATH first, and the resolved path is what the list checks.
    const path = await engine.task(viaPath.key);
    expect(path?.state).toBe('completed');
    expect((path?.result as { stdout?: string } | undefined)?.stdout).toBe('path\n');
  });
});
