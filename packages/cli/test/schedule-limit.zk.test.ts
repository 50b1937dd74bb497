import type { ChildProcess } from 'node:child_process';
import { runWorker } from '@zoott/core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshWorld, json, session, startWorkerBin, until } from './helpers.js';

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

const workers: ChildProcess[] = [];
afterEach(() => {
  for (const w of workers.splice(0)) w.kill('SIGKILL');
});

beforeAll(assertBuilt);

interface ListedJson {
  world: string;
  scheduler: string | null;
  schedules: Array<{
    name: string;
    cron: string;
    tz?: string;
    type: string;
    data?: unknown;
    nextTick: number | null;
    lastTick?: number;
  }>;
}

describe('zoott schedule', { timeout: SLOW }, () => {
  it('add, list, remove; --json twins; bad cron or zone exit 2 and write nothing', async () => {
    const { z } = await freshWorld();
    const add = await z([
      'schedule',
      'add',
      'nightly',
      '--cron',
      '0 2 * * *',
      '--type',
      'report',
      '--data',
      '{"full":true}',
      '--tz',
      'Europe/Amsterdam',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toMatch(
      /schedule nightly added to world tw: 0 2 \* \* \* \(Europe\/Amsterdam\), type report; next tick 20\d\d-/,
    );
    const addJson = await z([
      '--json',
      'schedule',
      'add',
      'often',
      '--cron',
      '*/5 * * * *',
      '-t',
      'ping',
    ]);
    expect(addJson.code, addJson.stderr).toBe(0);
    expect(json<{ schedule: { name: string; nextTick: number } }>(addJson).schedule).toMatchObject({
      name: 'often',
      cron: '*/5 * * * *',
      type: 'ping',
    });

    for (const [args, why] of [
      [['--cron', '61 * * * *', '-t', 'x'], /cron: "61 \* \* \* \*": .*minute/],
      [
        ['--cron', '* * * * *', '-t', 'x', '--tz', 'Mars/Olympus'],
        /tz: "Mars\/Olympus" is not a known IANA time zone/,
      ],
      [['--cron', '* * * * *'], /--type is required/],
      [['--cron', '* * * * *', '-t', 'x', '--data', '{oops'], /--data is not valid JSON/],
    ] as const) {
      const bad = await z(['schedule', 'add', 'bad', ...args]);
      expect(bad.code, bad.stderr).toBe(2);
      expect(bad.stderr).toMatch(why);
    }
    const dup = await z(['schedule', 'add', 'often', '--cron', '* * * * *', '-t', 'x']);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toMatch(/already exists/);

    const listed = json<ListedJson>(await z(['--json', 'schedule', 'list']));
    expect(listed.world).toBe('tw');
    expect(listed.scheduler).toBeNull();
    expect(listed.schedules.map((s) => s.name)).toEqual(['nightly', 'often']);
    expect(listed.schedules[0]).toMatchObject({ tz: 'Europe/Amsterdam', data: { full: true } });
    expect(listed.schedules[0]?.nextTick).toBeGreaterThan(Date.now());
    const text = await z(['schedule', 'list']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^NAME\s+CRON\s+TZ\s+TYPE\s+NEXT TICK\s+LAST TICK/m);
    expect(text.stdout).toMatch(/nightly\s+0 2 \* \* \*\s+Europe\/Amsterdam\s+report/);
    expect(text.stderr).toMatch(/no scheduler/);

    const rm = await z(['--json', 'schedule', 'remove', 'often']);
    expect(json(rm)).toEqual({ world: 'tw', removed: 'often' });
    const again = await z(['schedule', 'remove', 'often']);
    expect(again.code).toBe(5);
    expect(again.stderr).toMatch(/no schedule often in world tw/);
    expect(json<ListedJson>(await z(['--json', 'schedule', 'list'])).schedules).toHaveLength(1);
  });

  it('a running worker elects itself scheduler and queues one task per tick', async () => {
    const { connect, z } = await freshWorld();
    const add = await z(['schedule', 'add', 'sec', '--cron', '* * * * * *', '-t', 'nobody-serves']);
    expect(add.code, add.stderr).toBe(0);
    workers.push(startWorkerBin(connect, process.execPath));
    await until(
      async () => {
        const r = await z(['--json', 'ls', 'pending']);
        return r.code === 0 && (json<{ tasks: unknown[] }>(r).tasks?.length ?? 0) >= 2;
      },
      'two ticks queued',
      120_000,
    );
    const listed = json<ListedJson>(await z(['--json', 'schedule', 'list']));
    expect(listed.scheduler).toMatch(/\S/);
    expect(listed.schedules[0]?.lastTick).toBeGreaterThan(0);
    const pending = json<{ tasks: Array<{ key: string }> }>(
      await z(['--json', 'ls', 'pending']),
    ).tasks;
    const names = pending.map((t) => t.key);
    expect(names.filter((n) => !/^sec-\d{8}T\d{6}Z$/.test(n))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    const shown = json<{ type: string }>(await z(['--json', 'show', names[0]!]));
    expect(shown.type).toBe('nobody-serves');
  });
});

describe('zoott limit', { timeout: SLOW }, () => {
  it('sets, shows, lists and removes; a bad rate exits 2 and writes nothing', async () => {
    const { connect, z } = await freshWorld();
    const set = await z(['limit', 'tw', 'mail', '20/s']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/limit set: mail: 20\/s \(no live worker serves it\)/);
    const bad = await z(['limit', 'tw', 'other', '20 per second']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/rate "20 per second": expected <number>\/<s\|m\|h>/);
    const both = await z(['limit', 'tw', 'mail', '5/s', '--remove']);
    expect(both.code).toBe(2);
    const listed = json<{ world: string; limits: Array<Record<string, unknown>> }>(
      await z(['--json', 'limit', 'tw']),
    );
    expect(listed).toMatchObject({
      world: 'tw',
      limits: [{ type: 'mail', rate: '20/s', count: 20, perMs: 1000, workers: 0 }],
    });
    // Two workers serving the type share the limit.
    const serving = await Promise.all(
      [1, 2].map(async () =>
        runWorker(await session(connect), { mail: () => 'sent' }, { world: 'tw' }),
      ),
    );
    await until(
      async () =>
        json<{ limits: Array<{ workers: number }> }>(await z(['--json', 'limit', 'tw'])).limits[0]
          ?.workers === 2,
      'two workers listed',
    );
    const text = await z(['limit', 'tw']);
    expect(text.stdout).toMatch(/^TYPE\s+LIMIT\s+WORKERS\s+EACH/m);
    expect(text.stdout).toMatch(/mail\s+20\/s\s+2\s+10\/s/);
    await Promise.all(serving.map((w) => w.stop()));
    const one = json<{ limit: { type: string } }>(await z(['--json', 'limit', 'tw', 'mail']));
    expect(one.limit.type).toBe('mail');
    const rm = await z(['--json', 'limit', 'tw', 'mail', '--remove']);
    expect(json(rm)).toEqual({ world: 'tw', removed: 'mail' });
    const gone = await z(['limit', 'tw', 'mail', '--remove']);
    expect(gone.code).toBe(5);
    const none = await z(['limit', 'tw', 'mail']);
    expect(none.code).toBe(5);
    const badWorld = await z(['limit', 'no|such', 'mail', '1/s']);
    expect(badWorld.code).toBe(2);
    const uninit = await z(['limit', 'nope', 'mail', '1/s']);
    expect(uninit.code).toBe(5);
  });
});

describe('zoott status', { timeout: SLOW }, () => {
  it('shows the schedules, the scheduler and the limits; --json has them too', async () => {
    const { z } = await freshWorld();
    expect(
      (await z(['schedule', 'add', 'nightly', '--cron', '0 2 * * *', '-t', 'report'])).code,
    ).toBe(0);
    expect((await z(['limit', 'tw', 'mail', '20/s'])).code).toBe(0);
    const doc = json<{
      scheduler: string | null;
      schedules: Array<{ name: string; nextTick: number }>;
      limits: Array<{ type: string; rate: string; workers: number }>;
    }>(await z(['--json', 'status']));
    expect(doc.scheduler).toBeNull();
    expect(doc.schedules.map((s) => s.name)).toEqual(['nightly']);
    expect(doc.schedules[0]?.nextTick).toBeGreaterThan(Date.now());
    expect(doc.limits).toMatchObject([{ type: 'mail', rate: '20/s', workers: 0 }]);
    const text = await z(['status']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^SCHEDULE\s+CRON\s+TZ\s+TYPE\s+NEXT TICK/m);
    expect(text.stdout).toMatch(/nightly\s+0 2 \* \* \*\s+UTC\s+report/);
    expect(text.stdout).toMatch(/scheduler: none/);
    expect(text.stdout).toMatch(/^LIMITED TYPE\s+LIMIT\s+WORKERS\s+EACH/m);
    expect(text.stdout).toMatch(/mail\s+20\/s\s+0\s+-/);
  });
});
