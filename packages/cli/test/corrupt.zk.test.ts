import { type Coordinator, createEngine, utf8 } from '@zoott/core';
import { entryPrefix, WorldLayout } from '@zoott/core/internal';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, json, type RunResult, session, zoott } from './helpers.js';

// The corrupt-node catalogue: each kind of node zoott reads, corrupted by hand with a raw
// client, against every read verb of the real binary. One bad node must never fail a whole
// command: it is reported (path and why, in --json too) and the rest is shown; the exit
// code is 9 only when the task asked about is the corrupt one.

const SLOW = 240_000;
const WORLD = 'tw';
const layout = new WorldLayout(WORLD, 8);
const GARBAGE = utf8.encode('{not json');

/**
 * A world with: `a` pending and its child `a|b`, `c` working (claimed by this test's
 * session), `d` completed; 8 buckets.
 */
async function world(): Promise<{ connect: string; c: Coordinator }> {
  const connect = await freshConnect();
  const c = await session(connect);
  const engine = createEngine(c, { world: WORLD, buckets: 8 });
  await engine.init();
  await engine.queue({ name: 'a', type: 'ta' });
  await engine.queue({ name: 'b', type: 'tb' }, { key: ['a'] });
  await engine.queue({ name: 'c', type: 'tc' });
  await engine.queue({ name: 'd', type: 'td' });
  const working = await engine.claim({ worker: 'holder', types: ['tc'] });
  expect(working?.key).toEqual(['c']);
  const done = await engine.claim({ worker: 'finisher', types: ['td'] });
  expect(done?.key).toEqual(['d']);
  await engine.complete(done!, { ok: true });
  engine.close();
  return { connect, c };
}

async function entryPath(c: Coordinator, key: string[]): Promise<string> {
  const dir = layout.bucketPath('p', layout.bucketOf(key));
  const name = (await c.children(dir)).find((n) => n.includes(`-${key.join('|')}-`));
  if (!name) throw new Error(`no entry for ${key.join('|')}`);
  return `${dir}/${name}`;
}

interface Kind {
  name: string;
  /** Corrupts one node; returns its path. */
  corrupt: (c: Coordinator) => Promise<string>;
}

const KINDS: Kind[] = [
  {
    name: 'pending entry of a',
    corrupt: async (c) => {
      const path = await entryPath(c, ['a']);
      await c.set(path, GARBAGE);
      return path;
    },
  },
  {
    // A live registration (ephemeral, as a worker's is) whose info is unreadable.
    name: 'registry node',
    corrupt: async (c) => {
      const path = `${layout.registry}/worker-0000000099`;
      await c.create(path, GARBAGE, { ephemeral: true });
      return path;
    },
  },
  {
    // Garbage no session owns: not a live worker (workers ignore it), still reported.
    name: 'persistent registry node',
    corrupt: async (c) => {
      const path = `${layout.registry}/worker-0000000098`;
      await c.create(path, GARBAGE);
      return path;
    },
  },
  {
    name: 'working node of c',
    corrupt: async (c) => {
      const path = layout.recordPath('w', ['c']);
      await c.set(path, GARBAGE);
      return path;
    },
  },
  {
    name: 'completed record of d',
    corrupt: async (c) => {
      const path = layout.recordPath('c', ['d']);
      await c.set(path, GARBAGE);
      return path;
    },
  },
  {
    name: 'tree node of a|b',
    corrupt: async (c) => {
      const path = layout.treePath(['a', 'b']);
      // JSON, but not a tree node: the wrong shape counts as corrupt too.
      await c.set(path, utf8.encode('[1,2]'));
      return path;
    },
  },
];

/** What one verb must do with one kind of corrupt node. */
interface Cell {
  args: string[];
  code: number;
  /** The corrupt node appears in the JSON document's `corrupt` list (and on stderr). */
  reported: boolean;
  /** Further checks of the JSON document. */
  check?: (doc: Record<string, unknown>) => void;
}

const keysOf = (doc: Record<string, unknown>) =>
  (doc.tasks as { key: string }[]).map((t) => t.key).sort();

/** The verbs, per kind: exit code and whether the node is reported. */
function cells(kind: string): Cell[] {
  const is = (k: string) => kind === k;
  return [
    {
      args: ['status'],
      code: 0,
      reported:
        is('pending entry of a') ||
        is('registry node') ||
        is('persistent registry node') ||
        is('working node of c'),
      check: (d) => expect(d).toMatchObject({ pending: 2, working: 1, completed: 1 }),
    },
    {
      args: ['workers'],
      code: 0,
      reported: is('registry node') || is('persistent registry node') || is('working node of c'),
      check: (d) => expect(d.workers).toEqual([]),
    },
    {
      args: ['ls', 'pending'],
      code: 0,
      reported: is('pending entry of a'),
      check: (d) => expect(keysOf(d)).toEqual(['a', 'a|b']),
    },
    {
      args: ['ls', 'working'],
      code: 0,
      reported: is('working node of c'),
      check: (d) => expect(keysOf(d)).toEqual(['c']),
    },
    {
      // Completed records are not read by ls (they can be large).
      args: ['ls', 'completed'],
      code: 0,
      reported: false,
      check: (d) => expect(keysOf(d)).toEqual(['d']),
    },
    { args: ['ls', 'failed'], code: 0, reported: false, check: (d) => expect(d.tasks).toEqual([]) },
    {
      args: ['show', 'a'],
      code: is('pending entry of a') ? 9 : 0,
      reported: is('pending entry of a'),
      check: (d) => expect(d).toMatchObject({ key: 'a', state: 'pending' }),
    },
    {
      args: ['show', 'a/b'],
      code: is('tree node of a|b') ? 9 : 0,
      reported: is('tree node of a|b'),
      check: (d) => expect(d).toMatchObject({ key: 'a|b', state: 'pending' }),
    },
    {
      args: ['show', 'c'],
      code: is('working node of c') ? 9 : 0,
      reported: is('working node of c'),
      check: (d) => expect(d).toMatchObject({ key: 'c', state: 'working' }),
    },
    {
      args: ['show', 'd'],
      code: is('completed record of d') ? 9 : 0,
      reported: is('completed record of d'),
      check: (d) => expect(d).toMatchObject({ key: 'd', state: 'completed' }),
    },
    {
      args: ['tree'],
      code: 0,
      reported: is('tree node of a|b'),
      check: (d) =>
        expect((d.tasks as { key: string }[]).map((t) => t.key)).toEqual(['a', 'c', 'd']),
    },
    {
      args: ['tree', 'a'],
      code: is('pending entry of a') ? 9 : 0,
      reported: is('pending entry of a') || is('tree node of a|b'),
      check: (d) => {
        const [top] = d.tasks as { key: string; children: { key: string }[] }[];
        expect(top?.key).toBe('a');
        expect(top?.children.map((t) => t.key)).toEqual(['a|b']);
      },
    },
    {
      args: ['tree', 'd'],
      code: is('completed record of d') ? 9 : 0,
      reported: is('completed record of d'),
    },
    {
      // Matches a (fine) and a|b (its type unknown when corrupt: skipped, reported).
      args: ['queue', 'q', '-t', 'tq', '--parent-name', '[ab]', '--child-name', 'q_{parent}'],
      code: 0,
      reported: is('tree node of a|b'),
      check: (d) => {
        const keys = (d.queued as { key: string }[]).map((q) => q.key).sort();
        expect(keys).toEqual(is('tree node of a|b') ? ['a|q_a'] : ['a|b|q_b', 'a|q_a']);
      },
    },
  ];
}

async function runCell(connect: string, cell: Cell, path: string): Promise<RunResult> {
  const r = await zoott(['--connect', connect, '--world', WORLD, '--json', ...cell.args]);
  const what = `zoott ${cell.args.join(' ')} (exit ${r.code})\n${r.stdout}\n${r.stderr}`;
  expect(r.code, what).toBe(cell.code);
  expect(r.stderr, what).not.toMatch(/looks like a bug|\n\s+at /);
  const doc = json<Record<string, unknown>>(r);
  const corrupt = (doc.corrupt ?? []) as { path: string; reason: string }[];
  const mine = corrupt.find((n) => n.path === path);
  if (cell.reported) {
    expect(mine, what).toBeDefined();
    expect(mine!.reason, what).toMatch(
      path.endsWith('-0000000098')
        ? /persistent node, not a live worker/
        : /not JSON|not a tree node/,
    );
    expect(r.stderr, what).toContain(`corrupt: ${path}:`);
  } else expect(mine, what).toBeUndefined();
  cell.check?.(doc);
  return r;
}

beforeAll(assertBuilt);

describe('one corrupt node never fails a whole command', { timeout: SLOW }, () => {
  for (const kind of KINDS)
    it(`${kind.name}: every read verb reports it and carries on`, async () => {
      const { connect, c } = await world();
      const path = await kind.corrupt(c);
      // Two at a time: each is a fresh node process on a busy machine.
      const list = cells(kind.name);
      for (let i = 0; i < list.length; i += 2)
        await Promise.all(list.slice(i, i + 2).map((cell) => runCell(connect, cell, path)));
      // Human output names the node too, and still shows the rest.
      const human = await zoott(['--connect', connect, '--world', WORLD, 'status']);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(/^world\s+tw$/m);
      expect(human.stdout).toMatch(/^working\s+1$/m);
      if (list[0]!.reported) expect(human.stderr).toContain(`corrupt: ${path}:`);
    });

  it('cancel removes a task whose nodes are corrupt, and says which were', async () => {
    const { connect, c } = await world();
    const entry = await entryPath(c, ['a']);
    await c.set(entry, GARBAGE);
    await c.set(layout.treePath(['a', 'b']), GARBAGE);
    const other = await zoott(['--connect', connect, '--world', WORLD, '--json', 'cancel', 'd']);
    expect(other.code, other.stderr).toBe(0);
    expect(json(other)).toEqual({ cancelled: ['d'], corrupt: [] });
    const r = await zoott([
      '--connect',
      connect,
      '--world',
      WORLD,
      '--json',
      'cancel',
      'a',
      '--subtree',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const doc = json<{ cancelled: string[]; corrupt: { path: string }[] }>(r);
    expect(doc.cancelled.sort()).toEqual(['a', 'a|b']);
    expect(doc.corrupt.map((n) => n.path)).toContain(entry);
    expect(await c.exists(entry)).toBeNull();
    expect(await c.exists(layout.treePath(['a']))).toBeNull();
  });

  it('ls pending lists only tasks that show finds', async () => {
    const { connect, c } = await world();
    // An entry whose task has no tree node, and one in a bucket its key does not hash to
    // (named as the engine names entries: prefix and a 10-digit sequence).
    const ghostDir = layout.bucketPath('p', layout.bucketOf(['ghost']));
    const ghost = await c.create(
      `${ghostDir}/${entryPrefix('q', 0, 'ghost')}0000000042`,
      utf8.encode(JSON.stringify({ name: 'ghost', type: 't', attempts: 0 })),
    );
    const home = layout.bucketOf(['a']);
    const strayDir = layout.bucketPath('p', (home + 1) % 8);
    const stray = await c.create(
      `${strayDir}/${entryPrefix('q', 0, 'a')}0000000042`,
      utf8.encode(JSON.stringify({ name: 'a', type: 'ta', attempts: 0 })),
    );
    const r = await zoott(['--connect', connect, '--world', WORLD, '--json', 'ls', 'pending']);
    expect(r.code, r.stderr).toBe(0);
    const doc = json<{ tasks: { key: string }[]; corrupt: { path: string; reason: string }[] }>(r);
    expect(doc.tasks.map((t) => t.key).sort()).toEqual(['a', 'a|b']);
    expect(doc.corrupt, r.stdout).toHaveLength(2);
    expect(doc.corrupt.find((n) => n.path === ghost)?.reason).toMatch(/no tree node/);
    expect(doc.corrupt.find((n) => n.path === stray)?.reason).toMatch(/belongs in bucket/);
    for (const t of doc.tasks) {
      const show = await zoott(['--connect', connect, '--world', WORLD, 'show', t.key]);
      expect(show.code, show.stderr).toBe(0);
    }
    const human = await zoott(['--connect', connect, '--world', WORLD, 'ls', 'pending']);
    expect(human.stdout.split('\n')[0]).toMatch(/^TASK\s+PRIORITY\s+RUNNABLE$/);
    expect(human.stdout).not.toMatch(/ghost/);
    expect(human.stderr).toContain(`corrupt: ${ghost}:`);
  });
});
