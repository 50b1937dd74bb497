import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, runWorker } from '@zoott/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshWorld, json, session, start, startWorkerBin, until } from './helpers.js';

// Job control through the real `zoott` binary on a real ZooKeeper: pause and resume,
// cancel of running work, delayed tasks.
const SLOW = 180_000;
const tmp = mkdtempSync(join(tmpdir(), 'zoott-control-'));

beforeAll(assertBuilt);

describe('pause and resume', { timeout: SLOW }, () => {
  it('pause stops a live worker claiming, status shows it, resume lets it run', async () => {
    const { connect, z } = await freshWorld();
    const c = await session(connect);
    const worker = runWorker(c, { t: (task) => task.name }, { world: 'tw', pollMs: 200 });
    try {
      const paused = await z(['--json', 'pause', 'tw']);
      expect(paused.code, paused.stderr).toBe(0);
      expect(json(paused)).toEqual({ world: 'tw', paused: { world: true, types: [] } });
      await until(() => worker.paused.world, 'the worker to see the pause');
      expect((await z(['queue', 'a', '-t', 't'])).code).toBe(0);
      const status = await z(['status']);
      expect(status.stdout).toMatch(/paused\s+paused \(all types\)/);
      expect(json(await z(['--json', 'status']))).toMatchObject({
        paused: { world: true, types: [] },
      });
      const typed = await z(['pause', 'tw', '--type', 'other']);
      expect(typed.stdout).toBe('tw: paused (all types); also on their own: other\n');
      const resumedAt = Date.now();
      const resumed = await z(['resume', 'tw']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toBe('tw: not paused\n');
      await until(
        async () => json<{ completed: number }>(await z(['--json', 'status'])).completed === 1,
        'the task to run after the resume',
      );
      const shown = json<{ startedAt: number }>(await z(['--json', 'show', 'a']));
      expect(shown.startedAt).toBeGreaterThanOrEqual(resumedAt);
      expect(json(await z(['--json', 'status']))).toMatchObject({
        paused: { world: false, types: [] },
      });
    } finally {
      await worker.stop();
    }
  });

  it('names what is wrong: an empty type, a world that does not exist', async () => {
    const { z } = await freshWorld();
    const empty = await z(['pause', 'tw', '--type', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/type "": must not be empty/);
    const none = await z(['pause', 'nowhere']);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/world nowhere is not initialised/);
    expect(json(await z(['--json', 'status']))).toMatchObject({
      paused: { world: false, types: [] },
    });
  });
});

describe('cancel', { timeout: SLOW }, () => {
  it('aborts the handler of a running task and records nothing', async () => {
    const { connect, z } = await freshWorld();
    const c = await session(connect);
    let aborted = false;
    const worker = runWorker(
      c,
      {
        t: (task) =>
          new Promise((resolve) =>
            task.signal.addEventListener('abort', () => {
              aborted = true;
              resolve('too late');
            }),
          ),
      },
      { world: 'tw', pollMs: 200 },
    );
    try {
      expect((await z(['queue', 'run', '-t', 't'])).code).toBe(0);
      await until(
        async () => json<{ working: number }>(await z(['--json', 'status'])).working === 1,
        'the task to run',
      );
      const r = await z(['--json', 'cancel', 'run']);
      expect(r.code, r.stderr).toBe(0);
      expect(json(r)).toMatchObject({ cancelled: ['run'] });
      await until(() => aborted, "the handler's signal to abort");
      expect((await z(['show', 'run'])).code).toBe(5);
      expect(json(await z(['--json', 'status']))).toMatchObject({ working: 0, completed: 0 });
    } finally {
      await worker.stop();
    }
  });

  it('asks for --subtree before cancelling a task with children', async () => {
    const { z } = await freshWorld();
    expect((await z(['queue', 'p', '-t', 't'])).code).toBe(0);
    expect((await z(['queue', 'k', '-t', 't', '--parent', 'p'])).code).toBe(0);
    const r = await z(['cancel', 'p']);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/task p: has 1 child task; cancel it with its subtree/);
    expect(r.stderr).toMatch(/hint: zoott cancel 'p' --subtree/);
    expect((await z(['--json', 'tree'])).stdout).toMatch(/"name": "k"/);
    const all = await z(['--json', 'cancel', 'p', '--subtree']);
    expect(json<{ cancelled: string[] }>(all).cancelled.sort()).toEqual(['p', 'p|k']);
  });
});

describe('delayed tasks', { timeout: SLOW }, () => {
  it('--delay and --at set when a task may start; ls pending shows it', async () => {
    const { z } = await freshWorld();
    const before = Date.now();
    expect((await z(['queue', 'soon', '-t', 't', '--delay', '1h30m'])).code).toBe(0);
    const after = Date.now();
    expect((await z(['queue', 'fixed', '-t', 't', '--at', '2030-01-02T03:04:05Z'])).code).toBe(0);
    expect((await z(['queue', 'plain', '-t', 't'])).code).toBe(0);
    const ls = json<{ tasks: { key: string; notBefore?: number; runnableAt?: string }[] }>(
      await z(['--json', 'ls', 'pending']),
    );
    const byKey = new Map(ls.tasks.map((t) => [t.key, t]));
    const soon = byKey.get('soon')!.notBefore!;
    expect(soon).toBeGreaterThanOrEqual(before + 5_400_000);
    expect(soon).toBeLessThanOrEqual(after + 5_400_000);
    expect(byKey.get('fixed')).toMatchObject({
      notBefore: Date.parse('2030-01-02T03:04:05Z'),
      runnableAt: '2030-01-02T03:04:05.000Z',
    });
    expect(byKey.get('plain')).not.toHaveProperty('notBefore');
    const text = (await z(['ls', 'pending'])).stdout;
    expect(text).toMatch(/RUNNABLE/);
    expect(text).toMatch(/fixed\s+0\s+2030-01-02T03:04:05\.000Z \(in /);
    expect(text).toMatch(/plain\s+0\s+now/);
    expect((await z(['show', 'fixed'])).stdout).toMatch(/not before\s+2030-01-02T03:04:05\.000Z/);
  });

  it('refuses bad delays and times, naming the flag, and queues nothing', async () => {
    const { z } = await freshWorld();
    const cases: [string[], RegExp][] = [
      [['--delay', 'soon'], /--delay "soon": not a duration/],
      [['--delay', '400d'], /--delay "400d": must be at most 366 days/],
      [['--at', 'tomorrow'], /--at "tomorrow": not an ISO 8601 time/],
      [['--delay', '1s', '--at', '2030-01-01T00:00:00Z'], /give --delay or --at, not both/],
    ];
    for (const [flags, message] of cases) {
      const r = await z(['queue', 'x', '-t', 't', ...flags]);
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(json<{ tasks: unknown[] }>(await z(['--json', 'ls', 'pending'])).tasks).toEqual([]);
  });

  it('queue --from takes "delay" and "at" per line, and names a bad line', async () => {
    const { z } = await freshWorld();
    const good = join(tmp, 'delayed.jsonl');
    writeFileSync(
      good,
      [
        JSON.stringify({ name: 'l1', type: 't', delay: '10m' }),
        JSON.stringify({ name: 'l2', type: 't', at: '2031-05-06T07:08:09Z' }),
        '',
      ].join('\n'),
    );
    expect((await z(['queue', '--from', good])).code).toBe(0);
    const ls = json<{ tasks: { key: string; notBefore?: number }[] }>(
      await z(['--json', 'ls', 'pending']),
    );
    expect(ls.tasks.find((t) => t.key === 'l2')?.notBefore).toBe(
      Date.parse('2031-05-06T07:08:09Z'),
    );
    expect(ls.tasks.find((t) => t.key === 'l1')?.notBefore).toBeGreaterThan(Date.now());
    const bad = join(tmp, 'bad-delay.jsonl');
    writeFileSync(
      bad,
      [
        JSON.stringify({ name: 'b1', type: 't', delay: 5 }),
        JSON.stringify({ name: 'b2', type: 't', delay: 'soon' }),
        JSON.stringify({ name: 'b3', type: 't', delay: '1s', at: '2031-01-01' }),
        '',
      ].join('\n'),
    );
    const r = await z(['queue', '--from', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad-delay\.jsonl:1: "delay" must be a string/);
    expect(r.stderr).toMatch(/bad-delay\.jsonl:2: "delay" "soon": not a duration/);
    expect(r.stderr).toMatch(/bad-delay\.jsonl:3: give "delay" or "at", not both/);
  });

  it('a delayed task starts no sooner than its time on a live worker', async () => {
    const { connect, z } = await freshWorld();
    expect((await z(['queue', 'd', '-t', 't', '--delay', '1500ms'])).code).toBe(0);
    const { notBefore } = json<{ notBefore: number }>(await z(['--json', 'show', 'd']));
    const c = await session(connect);
    const worker = runWorker(c, { t: () => 'ran' }, { world: 'tw', pollMs: 200 });
    try {
      const engine = createEngine(c, { world: 'tw' });
      await until(async () => (await engine.task(['d']))?.state === 'completed', 'the task to run');
      expect((await engine.task(['d']))?.startedAt).toBeGreaterThanOrEqual(notBefore);
    } finally {
      await worker.stop();
    }
  });
});

describe('progress and logs', { timeout: SLOW }, () => {
  it("a handler's progress is streamed by watch --progress and shown by show", async () => {
    const { connect, z } = await freshWorld();
    const c = await session(connect);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const worker = runWorker(
      c,
      {
        t: async (task) => {
          task.progress(0.5);
          task.log('half way');
          await gate;
          return 'ok';
        },
      },
      { world: 'tw', pollMs: 200 },
    );
    const watch = start(['--connect', connect, '--world', 'tw', '--json', 'watch', '--progress']);
    try {
      await until(() => watch.err().includes('watching world tw'), 'the watch to start');
      expect((await z(['queue', 'p1', '-t', 't'])).code).toBe(0);
      await until(() => watch.out().includes('"type":"progress"'), 'a progress line');
      const line = watch
        .out()
        .split('\n')
        .filter((l) => l.includes('"type":"progress"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)[0];
      expect(line).toMatchObject({ type: 'progress', key: 'p1', world: 'tw', attempt: 1 });
      expect(line?.progress).toBe(0.5);
      expect(line?.log).toEqual(['half way']);

      const shown = await z(['show', 'p1']);
      expect(shown.stdout).toMatch(/progress\s+50% \(attempt 1\)/);
      expect(shown.stdout).toMatch(/log\s+\S+Z half way/);
      const asJson = json<{ report: { progress: number; log: { line: string }[] } }>(
        await z(['--json', 'show', 'p1']),
      );
      expect(asJson.report.progress).toBe(0.5);
      expect(asJson.report.log.map((l) => l.line)).toEqual(['half way']);
      release();
      await until(async () => (await z(['show', 'p1'])).stdout.includes('completed'), 'done');
    } finally {
      release();
      watch.kill('SIGINT');
      await watch.exited;
      await worker.stop();
    }
  });

  it("a JSON job's fd-3 lines, on the real worker, are shown by show", async () => {
    const { connect, z } = await freshWorld();
    const worker = startWorkerBin(connect, '/bin/sh');
    try {
      const job = {
        executable: '/bin/sh',
        arguments: ['-c', 'echo "progress 0.75" >&3; echo "log three quarters" >&3; echo out'],
      };
      const q = await z(['queue', 'j1', '-t', 'zoott.job', '-d', JSON.stringify(job)]);
      expect(q.code, q.stderr).toBe(0);
      await until(async () => (await z(['show', 'j1'])).stdout.includes('completed'), 'the job');
      const shown = (await z(['show', 'j1'])).stdout;
      expect(shown).toMatch(/progress\s+75% \(attempt 1\)/);
      expect(shown).toMatch(/three quarters/);
    } finally {
      worker.kill('SIGTERM');
      await new Promise((r) => worker.once('exit', r));
    }
  });
});
