/**
 * Security findings that the CLI exposes, checked with the built `zoott` against a real
 * ZooKeeper: parent patterns that would stall a backtracking engine, worlds initialised with
 * credentials over an open world, and `lock-down`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, json, zoott } from './helpers.js';

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

beforeAll(assertBuilt);

describe('parent patterns run in linear time', { timeout: SLOW }, () => {
  it('an adversarial --parent-name against a long near-miss name answers at once', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, '--world', 'pat', ...args]);
    expect((await z(['init', 'pat'])).code).toBe(0);
    expect((await z(['queue', `${'a'.repeat(36)}!`, '-t', 'req'])).code).toBe(0);
    expect((await z(['queue', 'req_17', '-t', 'req'])).code).toBe(0);
    // 36 groups, each matching one 'a' two ways: a backtracking engine tries 2^36 splits
    // of the parent name above before it fails on the '!'. The process used to hang for
    // minutes (and ignored SIGTERM); with RE2 it answers "nothing matched".
    const started = Date.now();
    const r = await z([
      'queue',
      'c',
      '-t',
      'dl',
      '--parent-name',
      '(a|a)'.repeat(36),
      '--child-name',
      'c_{1}',
    ]);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/no task matches the parent pattern/);
    // Process start and ZooKeeper round trips included; the bound only catches blow-up.
    expect(Date.now() - started).toBeLessThan(30_000);
    // Capture groups for --child-name come from the same engine (RE2 named groups too).
    const q = await z([
      '--json',
      'queue',
      'dl',
      '-t',
      'dl',
      '--parent-name',
      'req_(?P<n>\\d+)',
      '--child-name',
      'dl_{1}',
    ]);
    expect(q.code, q.stderr).toBe(0);
    expect(json<{ queued: { key: string }[] }>(q).queued.map((t) => t.key)).toEqual([
      'req_17|dl_17',
    ]);
  });
});
