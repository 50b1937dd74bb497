import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createEngine } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import { SELF, settled } from '@zoott/testing';
import { describe, expect, it } from 'vitest';
import { startWorkerDaemon, submitJob, waitForResult } from '../src/internal.js';
import { daemonOnZookeeper } from './daemon-on-zookeeper.js';

const WORLD = 'jobs';

describe('regular jobs on a real ZooKeeper', { timeout: 120_000 }, () => {
  const zk = daemonOnZookeeper({
    world: WORLD,
    nodeId: 'solo',
    concurrency: 4,
    allowExec: ['/bin/*', '/usr/bin/echo'],
  });

  async function run(job: object): Promise<RegularJobResult> {
    const { key } = await submitJob(zk.client, job, { world: WORLD });
    const rec = await settled(zk.client, WORLD, key);
    expect(rec.state, JSON.stringify(rec.error)).toBe('completed');
    return rec.result as RegularJobResult;
  }

  it('exit 0: output, pid, server, times, custom properties, reply path', async () => {
    const routingkey = `rk-${randomUUID()}`;
    const result = await run({
      executable: '/bin/echo',
      arguments: ['hello', 'world'],
      ticket: 7,
      tags: { a: [1, 2] },
      exchange: 'results',
      routingkey,
    });
    expect(result.exit).toBe(0);
    expect('signal' in result).toBe(false);
    expect(result.stdout).toBe('hello world\n');
    expect(result.stderr).toBe('');
    expect(result.server).toBe(hostname());
    expect(result.pid).toBeGreaterThan(0);
    expect(result.ticket).toBe(7);
    expect(result.tags).toEqual({ a: [1, 2] });
    expect(Date.parse(result.finished)).toBeGreaterThanOrEqual(Date.parse(result.started));
    const reply = await waitForResult<RegularJobResult>(zk.client, {
      world: WORLD,
      exchange: 'results',
      routingkey,
      timeoutMs: 30_000,
    });
    expect(reply.path).toMatch(
      new RegExp(`^/zoott_~replies/${WORLD}/results/${routingkey}/result-.*\\d{10}$`),
    );
    expect(reply.result).toEqual(result);
    // Consumed: it is gone now.
    expect(await zk.client.children(`/zoott_~replies/${WORLD}/results/${routingkey}`)).toEqual([]);
  });

  it('exit 3 is reported as exit, without a signal', async () => {
    const result = await run({ executable: '/bin/sh', arguments: ['-c', 'echo oops >&2; exit 3'] });
    expect(result.exit).toBe(3);
    expect(result.signal).toBeUndefined();
    expect(result.stderr).toBe('oops\n');
  });

  it('a process killed by a signal reports the signal, never an exit code', async () => {
    const result = await run({ executable: '/bin/sh', arguments: ['-c', 'kill -9 $$'] });
    expect(result.signal).toBe(9);
    expect(result.exit).toBeUndefined();
  });

  it('timeout: SIGTERM, reported as the signal, with timedOut', async () => {
    const result = await run({ executable: '/bin/sleep', arguments: ['30'], timeoutMs: 300 });
    expect(result.signal).toBe(15);
    expect(result.exit).toBeUndefined();
    expect(result.timedOut).toBe(true);
  });

  it('output beyond the cap is cut and marked truncated', async () => {
    const result = await run({
      executable: '/bin/sh',
      arguments: ['-c', 'head -c 600000 /dev/zero | tr "\\0" a'],
    });
    expect(result.exit).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBeGreaterThan(100_000);
    expect(result.stdout.length).toBeLessThan(262_144);
  });

  it('stdin is passed through and echoed in the result', async () => {
    const result = await run({ executable: '/bin/cat', stdin: 'line one\nline two\n' });
    expect(result.stdout).toBe('line one\nline two\n');
    expect(result.stdin).toBe('line one\nline two\n');
  });

  it('an executable found on PATH runs; one that does not exist reports no exit, only why', async () => {
    expect((await run({ executable: 'echo', arguments: ['x'] })).stdout).toBe('x\n');
    const missing = await run({ executable: '/bin/no-such-program-zoott' });
    expect(missing).not.toHaveProperty('exit');
    expect(missing.pid).toBe(0);
    expect(missing.error).toMatch(/not found/);
  });

  it('an invalid job fails at once with a clear error, and the worker keeps running', async () => {
    const engine = createEngine(zk.client, { world: WORLD });
    const [queued] = await engine.queue({
      name: 'bad-job',
      type: 'zoott.job',
      data: { arguments: 'not-a-list' },
    });
    const rec = await settled(zk.client, WORLD, queued!.key);
    expect(rec.state).toBe('failed');
    expect(rec.attempts).toBe(1);
    expect(rec.error?.message).toMatch(/executable: is required/);
    expect(rec.error?.code).toBe('INVALID_JOB');
    // Still serving.
    expect((await run({ executable: '/bin/echo', arguments: ['alive'] })).stdout).toBe('alive\n');
  });

  it('an executable outside --allow-exec fails at once, naming the policy', async () => {
    const engine = createEngine(zk.client, { world: WORLD });
    const [queued] = await engine.queue({
      name: 'refused-job',
      type: 'zoott.job',
      // Not /usr/bin/*: with /bin a link to /usr/bin, the policy's /bin/* allows those.
      data: { executable: '/usr/sbin/nologin' },
    });
    const rec = await settled(zk.client, WORLD, queued!.key);
    expect(rec.state).toBe('failed');
    expect(rec.attempts).toBe(1);
    expect(rec.error?.message).toMatch(/not allowed on worker solo.*--allow-exec/);
  });

  it('submitJob refuses an invalid job before queueing it', async () => {
    await expect(submitJob(zk.client, { executable: 5 }, { world: WORLD })).rejects.toMatchObject({
      code: 'INVALID_JOB',
      field: 'executable',
    });
    await expect(
      submitJob(zk.client, { executable: '/bin/echo', routingkey: 'a/b' }, { world: WORLD }),
    ).rejects.toMatchObject({ code: 'INVALID_JOB', field: 'routingkey' });
  });

  it('the metrics endpoint answers with the worker counters', async () => {
    const metricsDaemon = await startWorkerDaemon({
      connect: zk.ns,
      createWorld: true,
      world: 'metered',
      nodeId: 'metered',
      allowExec: ['/bin/*'],
      runAs: SELF,
      metricsPort: 0,
      logLevel: 'silent',
    });
    try {
      const { key } = await submitJob(
        zk.client,
        { executable: '/bin/echo', arguments: ['m'] },
        { world: 'metered' },
      );
      await settled(zk.client, 'metered', key);
      const text = await (await fetch(metricsDaemon.metricsServer!.url)).text();
      expect(text).toMatch(/zoott_worker_tasks_started_total\{type="zoott.job"\} 1/);
      expect(text).toMatch(/zoott_worker_tasks_completed_total\{type="zoott.job"\} 1/);
      expect(text).toContain('zoott_worker_tasks_failed_total');
      expect(text).toContain('zoott_worker_tasks_retried_total');
      expect(text).toMatch(
        /zoott_worker_task_duration_seconds_count\{type="zoott.job",outcome="ok"\} 1/,
      );
      expect(text).toMatch(/zoott_worker_world_tasks\{world="metered",area="completed"\} 1/);
      expect(text).toMatch(/zoott_worker_session_state\{state="connected"\} 1/);
      expect(text).toMatch(/zoott_worker_running_processes 0/);
      // prom-client's process and Node.js metrics, next to zoott's.
      expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
      expect(text).toMatch(/^process_resident_memory_bytes \d/m);
      expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
      // The README's table lists exactly the zoott metrics the endpoint serves.
      const served = new Set([...text.matchAll(/^# TYPE (zoott_\w+) /gm)].map((m) => m[1]));
      const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
      const documented = new Set([...readme.matchAll(/^\| `(zoott_\w+)` \|/gm)].map((m) => m[1]));
      expect([...served].sort()).toEqual([...documented].sort());
    } finally {
      await metricsDaemon.stop();
    }
  });
});
