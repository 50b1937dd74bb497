import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, runWorker } from '@zoott/core';
import { publishResult, replyDir } from '@zoott/jobs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  freshConnect,
  freshWorld,
  json,
  session,
  start,
  startWorkerBin,
  until,
  zoott,
} from './helpers.js';

// The smaller promises of the CLI, each through the real binary.

const SLOW = 180_000;
const tmp = mkdtempSync(join(tmpdir(), 'zoott-surface-'));

beforeAll(assertBuilt);

describe('tree, ls, submit, export, import', { timeout: SLOW }, () => {
  it('tree <task> shows the task itself with its subtree; a missing one is exit 5', async () => {
    const { z } = await freshWorld(['--buckets', '8']);
    expect((await z(['queue', 'a', '-t', 'ta'])).code).toBe(0);
    expect((await z(['queue', 'b', '-t', 'tb', '--parent', 'a'])).code).toBe(0);
    expect((await z(['queue', 'c', '-t', 'tc', '--parent', 'a|b'])).code).toBe(0);
    expect((await z(['queue', 'other', '-t', 'to'])).code).toBe(0);
    const r = await z(['tree', 'a/b']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      ['/zoott_tw', '└── b (tb) pending', '    └── c (tc) pending', '2 pending', ''].join('\n'),
    );
    const doc = json<{ tasks: { key: string; children: { key: string }[] }[] }>(
      await z(['--json', 'tree', 'a|b']),
    );
    expect(doc.tasks).toMatchObject([{ key: 'a|b', children: [{ key: 'a|b|c' }] }]);
    const missing = await z(['tree', 'nope']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/no task nope in world tw/);
  });

  it('ls prints column headers', async () => {
    const { connect, z } = await freshWorld(['--buckets', '8']);
    expect((await z(['queue', 'a', '-t', 'slow', '-p', '3'])).code).toBe(0);
    expect((await z(['queue', 'b', '-t', 'slow'])).code).toBe(0);
    const pending = await z(['ls', 'pending']);
    expect(pending.stdout.split('\n')[0]).toMatch(/^TASK\s+PRIORITY\s+RUNNABLE$/);
    expect(pending.stdout).toMatch(/^a\s+3\s+now$/m);
    const engine = createEngine(await session(connect), { world: 'tw' });
    const claim = await engine.claim({ worker: 'wk-9' });
    const working = await z(['ls', 'working']);
    expect(working.stdout.split('\n')).toEqual([
      expect.stringMatching(/^TASK\s+PRIORITY\s+WORKER$/),
      expect.stringMatching(new RegExp(`^${claim!.key[0]}\\s+\\d+\\s+wk-9$`)),
      '',
    ]);
    await engine.complete(claim!, null);
    const completed = await z(['ls', 'completed']);
    expect(completed.stdout).toBe(`TASK\n${claim!.key[0]}\n`);
  });

  it('submit <directory> is a usage error; export of a missing path names the path', async () => {
    const { connect, z } = await freshWorld(['--buckets', '8']);
    const dir = join(tmp, 'a-directory');
    mkdirSync(dir, { recursive: true });
    const sub = await z(['submit', dir]);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toMatch(/a-directory is a directory, not a job file/);
    expect(sub.stderr).not.toMatch(/looks like a bug/);

    const exp = await zoott(['--connect', connect, 'export', '/no/such/path']);
    expect(exp.code).toBe(5);
    expect(exp.stderr).toMatch(/no node \/no\/such\/path/);
    expect(exp.stderr).toMatch(/hint: check the path/);
    expect(exp.stderr).not.toMatch(/chroot of the connect string does not exist/);
    const server = connect.replace(/\/.*$/, '');
    const noChroot = await zoott([
      '--connect',
      `${server}/never-made-${Date.now()}`,
      'export',
      '/x',
    ]);
    expect(noChroot.code).toBe(5);
    expect(noChroot.stderr).toMatch(/chroot of the connect string does not exist/);
  });

  it('import says how many nodes it created and how many were there', async () => {
    const connect = await freshConnect();
    const file = join(tmp, 'tree.yaml');
    writeFileSync(file, ['app:', '  a: { __val__: 1 }', '  b: { __val__: 2 }'].join('\n'));
    const first = await zoott(['--connect', connect, '--json', 'import', file]);
    expect(first.code, first.stderr).toBe(0);
    expect(json(first)).toMatchObject({ nodes: 3, created: 3, existing: 0 });
    writeFileSync(
      file,
      ['app:', '  a: { __val__: 1 }', '  b: { __val__: 2 }', '  c: {}'].join('\n'),
    );
    const again = await zoott(['--connect', connect, 'import', file]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /imported 4 node\(s\) from .*tree\.yaml under \/: 1 created, 3 already present \(values kept; --update overwrites them\)/,
    );
  });
});

describe('wait and submit --wait', { timeout: SLOW }, () => {
  it('wait takes only results published after it began, unless --any', async () => {
    const { connect, z } = await freshWorld(['--buckets', '8']);
    const c = await session(connect);
    await publishResult(c, { routingkey: 'rk' }, { old: true }, { world: 'tw' });
    const fresh = await z(['wait', 'rk', '--timeout', '1']);
    expect(fresh.code).toBe(6);
    const any = await z(['--json', 'wait', 'rk', '--any', '--peek', '--timeout', '5']);
    expect(any.code, any.stderr).toBe(0);
    expect(json<{ result: unknown }>(any).result).toEqual({ old: true });
    const waiter = start(['--connect', connect, '--world', 'tw', 'wait', 'rk', '--timeout', '60']);
    await until(() => waiter.err().includes('waiting for a result'), 'the waiter to start');
    await publishResult(c, { routingkey: 'rk' }, { fresh: 1 }, { world: 'tw' });
    const got = await waiter.exited;
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual({ fresh: 1 });
    // The old result is still there: only --any takes it.
    expect(await c.children(replyDir({ routingkey: 'rk' }, 'tw'))).toHaveLength(1);
  });

  it('submit --wait prints why a job could not start, and takes the result it printed', async () => {
    const { connect, z } = await freshWorld(['--buckets', '8']);
    const worker = startWorkerBin(connect, `${process.execPath},/nonexistent/**`);
    try {
      const missing = join(tmp, 'missing-exe.json');
      writeFileSync(missing, JSON.stringify({ executable: '/nonexistent/bin/tool' }));
      const r = await z(['submit', missing, '--wait', '--timeout', '60']);
      expect(r.code).toBe(127);
      expect(r.stderr).toMatch(/job .*: .*\/nonexistent\/bin\/tool/);

      const replying = join(tmp, 'replying.json');
      writeFileSync(
        replying,
        JSON.stringify({
          executable: process.execPath,
          arguments: ['-e', 'console.log("hi")'],
          routingkey: 'mine',
        }),
      );
      const done = await z(['submit', replying, '--wait', '--timeout', '60']);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toBe('hi\n');
      // It printed the result, so no one else gets it from the reply path.
      const after = await z(['wait', 'mine', '--any', '--timeout', '1']);
      expect(after.code).toBe(6);
    } finally {
      worker.kill('SIGTERM');
    }
  });
});

describe('workers and status', { timeout: SLOW }, () => {
  it('UP is the time since the worker started, through rebalances', async () => {
    const { connect, z } = await freshWorld(['--buckets', '8']);
    const first = runWorker(
      await session(connect),
      { fetch: async () => null },
      {
        world: 'tw',
        id: 'first',
      },
    );
    try {
      await until(() => first.buckets.length === 8, 'the first worker to own every bucket');
      const before = json<{ workers: { id: string; started: number }[] }>(
        await z(['--json', 'workers']),
      ).workers;
      expect(before.map((w) => w.id)).toEqual(['first']);
      const second = runWorker(
        await session(connect),
        { fetch: async () => null },
        {
          world: 'tw',
          id: 'second',
        },
      );
      try {
        // The first worker rebalances (rewriting its registry node) when the second joins.
        await until(() => first.buckets.length === 4, 'the first worker to hand over buckets');
        const after = json<{ workers: { id: string; started: number; buckets: number[] }[] }>(
          await z(['--json', 'workers']),
        ).workers;
        const again = after.find((w) => w.id === 'first');
        expect(again?.buckets).toHaveLength(4);
        expect(again?.started).toBe(before[0]!.started);
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  });

  it('status names the pending task types no live worker serves', async () => {
    const { connect, z } = await freshWorld(['--buckets', '8']);
    for (const [n, t] of [
      ['f1', 'fetch'],
      ['f2', 'fetch'],
      ['r1', 'resize'],
      ['r2', 'resize'],
      ['s1', 'scan'],
    ])
      expect((await z(['queue', n!, '-t', t!])).code).toBe(0);
    const c = await session(connect);
    // Serves fetch, but is paused on a gate so the fetch tasks stay put.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const worker = runWorker(c, { fetch: () => gate }, { world: 'tw', id: 'fetcher' });
    try {
      await until(
        async () =>
          json<{ workers: unknown[] }>(await z(['--json', 'status'])).workers.length === 1,
        'the worker to register',
      );
      const doc = json<{ unservedTypes: string[]; pendingByType: Record<string, number> }>(
        await z(['--json', 'status']),
      );
      expect(doc.unservedTypes).toEqual(['resize', 'scan']);
      expect(doc.pendingByType).toMatchObject({ resize: 2, scan: 1 });
      const human = await z(['status']);
      expect(human.stdout).toMatch(/^unserved\s+resize \(2 pending\), scan \(1 pending\)$/m);
      expect(human.stderr).toMatch(/no live worker serves types resize, scan/);
    } finally {
      open();
      await worker.stop();
    }
  });
});
