import { createEngine, DEFAULT_RETENTION } from '@zoott/core';
import { publishResult } from '@zoott/jobs';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, json, session, zoott } from './helpers.js';

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

beforeAll(assertBuilt);

interface Kept {
  completed: { maxAgeMs: number | null; maxCount: number | null };
  results: { maxAgeMs: number | null; maxCount: number | null };
  failed: { warnCount: number | null };
  stored: boolean;
}

describe('zoott retention, init flags, status', { timeout: SLOW }, () => {
  it('init stores the flags; a bad flag names itself and creates nothing', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, ...args]);
    const bad = await z(['init', 'w1', '--completed', '24x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--completed: "24x" is not a duration/);
    const c = await session(connect);
    expect(await c.exists('/zoott_w1')).toBeNull();
    const badCount = await z(['init', 'w1', '--max-completed', '-5']);
    expect(badCount.code).toBe(2);
    expect(badCount.stderr).toMatch(/--max-completed: "-5" is not a count/);
    expect(await c.exists('/zoott_w1')).toBeNull();
    const ok = await z(['--json', 'init', 'w1', '--completed', '2h', '--max-results', '50']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(json<{ retention: Kept }>(ok).retention).toEqual({
      ...DEFAULT_RETENTION,
      completed: { maxAgeMs: 2 * 3_600_000, maxCount: DEFAULT_RETENTION.completed.maxCount },
      results: { maxAgeMs: DEFAULT_RETENTION.results.maxAgeMs, maxCount: 50 },
    });
  });

  it('shows the defaults, changes settings, refuses bad ones without writing; status shows them', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, ...args]);
    expect((await z(['init', 'w2'])).code).toBe(0);
    const shown = await z(['--json', 'retention', 'w2']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(json<{ retention: Kept }>(shown).retention).toEqual({
      ...DEFAULT_RETENTION,
      stored: false,
    });
    const human = await z(['retention', 'w2']);
    expect(human.stdout).toMatch(/completed\s+24h, at most 100000/);
    expect(human.stderr).toMatch(/defaults/);

    const set = await z([
      '--json',
      'retention',
      'w2',
      '--completed',
      'forever',
      '--max-completed',
      '1_000',
      '--results',
      '90m',
      '--max-failed',
      '3',
    ]);
    expect(set.code, set.stderr).toBe(0);
    const after = json<{ changed: boolean; retention: Kept }>(set);
    expect(after.changed).toBe(true);
    expect(after.retention).toMatchObject({
      completed: { maxAgeMs: null, maxCount: 1000 },
      results: { maxAgeMs: 90 * 60_000 },
      failed: { warnCount: 3 },
      stored: true,
    });

    // One good flag and one bad: nothing changes.
    const bad = await z(['retention', 'w2', '--completed', '1h', '--max-results', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-results: "lots" is not a count/);
    const again = json<{ retention: Kept }>(await z(['--json', 'retention', 'w2']));
    expect(again.retention.completed.maxAgeMs).toBeNull();

    const status = await z(['--json', '--world', 'w2', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(json<{ retention: Kept; failedOverCap: boolean }>(status)).toMatchObject({
      retention: { completed: { maxAgeMs: null, maxCount: 1000 }, stored: true },
      failedOverCap: false,
    });
    const statusText = await z(['--world', 'w2', 'status']);
    expect(statusText.stdout).toMatch(/keeps completed\s+forever, at most 1000/);
    expect(statusText.stdout).toMatch(/keeps failed\s+until retried or cancelled; warn past 3/);

    const missing = await z(['retention', 'nope']);
    expect(missing.code).toBe(5);
  });
});

describe('zoott clean', { timeout: SLOW }, () => {
  it('removes completed, failed and result records, with --dry-run and --older-than', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, ...args]);
    expect((await z(['init', 'w3', '--buckets', '4'])).code).toBe(0);
    const c = await session(connect);
    const engine = createEngine(c, { world: 'w3' });
    for (const name of ['a', 'b', 'c']) await engine.queue({ name, type: 't' });
    await engine.queue({ name: 'child', type: 't', parent: { key: ['a'] } });
    for (let i = 0; i < 4; i++) {
      const claim = await engine.claim();
      if (!claim) throw new Error('nothing to claim');
      await engine.complete(claim, i);
    }
    await engine.queue({ name: 'bad', type: 't', maxAttempts: 1 });
    const failing = await engine.claim();
    if (!failing) throw new Error('nothing to claim');
    await engine.fail(failing, new Error('boom'));
    await publishResult(c, { routingkey: 'rk' }, { ok: true }, { world: 'w3' });

    const dry = await z([
      '--json',
      'clean',
      'w3',
      '--completed',
      '--failed',
      '--results',
      '--dry-run',
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(json(dry)).toMatchObject({
      dryRun: true,
      completed: { matched: 4, removed: 0 },
      failed: { matched: 1, removed: 0 },
      results: { matched: 1, removed: 0 },
    });
    expect(await engine.counts()).toMatchObject({ completed: 4, failed: 1 });

    const young = await z(['--json', 'clean', 'w3', '--completed', '--older-than', '1h']);
    expect(json(young)).toMatchObject({ completed: { matched: 0, removed: 0 } });

    const done = await z(['--json', 'clean', 'w3', '--completed', '--failed', '--results']);
    expect(done.code, done.stderr).toBe(0);
    expect(json(done)).toMatchObject({
      completed: { matched: 4, removed: 4, treeNodes: 4 },
      failed: { matched: 1, removed: 1 },
      results: { matched: 1, removed: 1 },
    });
    // Progress on stderr (plain lines off a terminal): the scan, then the removal.
    expect(done.stderr).toMatch(/scanning completed: 4\/4 \(100%\)/);
    expect(done.stderr).toMatch(/removing completed: 4\/4 \(100%\)/);
    expect(await engine.counts()).toMatchObject({ completed: 0, failed: 0, pending: 0 });
    expect(await c.children('/zoott_w3')).toEqual([]);
    expect(await c.children('/zoott_~replies/w3/_default/rk')).toEqual([]);

    const text = await z(['clean', 'w3', '--completed']);
    expect(text.stdout).toMatch(/completed: removed 0 of 0 matching/);
    const none = await z(['clean', 'w3']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--completed, --failed and\/or --results/);
    const badAge = await z(['clean', 'w3', '--completed', '--older-than', 'soon']);
    expect(badAge.code).toBe(2);
    expect(badAge.stderr).toMatch(/--older-than: "soon" is not a duration/);
  });
});
