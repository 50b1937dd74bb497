import { createEngine } from '@zoott/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, session, zoott } from './helpers.js';

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

beforeAll(assertBuilt);

/**
 * A small world with every state: `a` completed, `a|b` working, `a|c` pending (blocked by
 * nothing: its parent is done), `d` failed, `e|f` pending below a pending parent.
 */
async function smallWorld(): Promise<string> {
  const connect = await freshConnect();
  const z = (...args: string[]) => zoott(['--connect', connect, '--world', 'snap', ...args]);
  expect((await z('init', 'snap', '--buckets', '4')).code).toBe(0);
  expect((await z('queue', 'a', '-t', 'fetch', '-p', '10')).code).toBe(0);
  expect((await z('queue', 'b', '-t', 'parse', '--parent', 'a', '-p', '5')).code).toBe(0);
  expect((await z('queue', 'c', '-t', 'parse', '--parent', 'a')).code).toBe(0);
  expect((await z('queue', 'd', '-t', 'fetch', '-p', '1', '--attempts', '1')).code).toBe(0);
  expect((await z('queue', 'e', '-t', 'idle', '-p', '-5')).code).toBe(0);
  expect((await z('queue', 'f', '-t', 'idle', '--parent', 'e')).code).toBe(0);
  const c = await session(connect);
  // A fresh engine per step: its first claim lists the buckets anew, so the order is exact.
  const claim = async (expected: string) => {
    const engine = createEngine(c, { world: 'snap' });
    const got = await engine.claim({ worker: 'snapper', types: ['fetch', 'parse'] });
    expect(got?.key.join('|')).toBe(expected);
    return { engine, claim: got! };
  };
  const a = await claim('a');
  await a.engine.complete(a.claim, { ok: true });
  await claim('a|b'); // held by this session until the test ends: working
  const d = await claim('d');
  await d.engine.fail(d.claim, new Error('unreachable host'));
  return connect;
}

describe('snapshots of tree and status', { timeout: SLOW }, () => {
  it('prints the tree plainly when piped, and in colour when forced', async () => {
    const connect = await smallWorld();
    const tree = await zoott(['--connect', connect, '--world', 'snap', 'tree']);
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.stdout).toMatchInlineSnapshot(`
      "/zoott_snap
      ├── a (fetch) completed
      │   ├── b (parse) working
      │   └── c (parse) pending
      ├── d (fetch) failed
      └── e (idle) pending
          └── f (idle) pending
      3 pending, 1 working, 1 completed, 1 failed
      "
    `);
    expect(tree.stdout).not.toContain('\u001b[');
    const coloured = await zoott(['--connect', connect, '--world', 'snap', 'tree'], {
      env: { NO_COLOR: undefined, FORCE_COLOR: '1' },
    });
    expect(coloured.stdout).toContain('\u001b[32mcompleted\u001b[39m');
    expect(coloured.stdout).toContain('\u001b[31mfailed\u001b[39m');

    const status = await zoott(['--connect', connect, '--world', 'snap', 'status']);
    expect(status.code, status.stderr).toBe(0);
    const normalised = status.stdout.replace(/oldest pending {2}.*/, 'oldest pending  <age>');
    expect(normalised).toMatchInlineSnapshot(`
      "world            snap
      pending          3
      working          1
      completed        1
      failed           1
      oldest pending  <age>
      workers          0
      unserved         idle (2 pending), parse (1 pending)
      keeps completed  24h, at most 100000
      keeps results    24h, at most 10000
      keeps failed     until retried or cancelled; warn past 10000
      "
    `);
    const statusJson = JSON.parse(
      (await zoott(['--connect', connect, '--world', 'snap', '--json', 'status'])).stdout,
    );
    expect({
      ...statusJson,
      oldestPendingAgeMs: typeof statusJson.oldestPendingAgeMs,
    }).toMatchInlineSnapshot(`
      {
        "buckets": 4,
        "completed": 1,
        "corrupt": [],
        "failed": 1,
        "failedOverCap": false,
        "limits": [],
        "oldestPendingAgeMs": "number",
        "paused": {
          "types": [],
          "world": false,
        },
        "pending": 3,
        "pendingByType": {
          "idle": 2,
          "parse": 1,
        },
        "retention": {
          "completed": {
            "maxAgeMs": 86400000,
            "maxCount": 100000,
          },
          "failed": {
            "warnCount": 10000,
          },
          "results": {
            "maxAgeMs": 86400000,
            "maxCount": 10000,
          },
          "stored": false,
        },
        "scheduler": null,
        "schedules": [],
        "total": 6,
        "unservedTypes": [
          "idle",
          "parse",
        ],
        "workers": [],
        "working": 1,
        "world": "snap",
      }
    `);
  });
});
