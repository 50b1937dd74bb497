import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, readRetention, runWorker } from '@zoott/core';
import { publishResult } from '@zoott/jobs';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, freshWorld, json, session, until, zoott } from './helpers.js';

// Flags whose other tests only parsed them or read back what the same command printed: here
// each is run through the built binary and its effect read from ZooKeeper by another client
// (or, for a flag that chooses what is read, by running the command with and without it).
const SLOW = 240_000;
const tmp = mkdtempSync(join(tmpdir(), 'zoott-flag-effects-'));

beforeAll(assertBuilt);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A fresh world `tw` (made with `initFlags`), zoott on it, and a session with its engine. */
async function fx(initFlags: string[] = []) {
  const { connect, z } = await freshWorld(initFlags);
  const c = await session(connect);
  return { connect, z, c, engine: createEngine(c, { world: 'tw' }) };
}

describe('priorities', { timeout: SLOW }, () => {
  it('queue --priority and -p: the higher is claimed first, whatever the order queued', async () => {
    const { z, engine } = await fx();
    expect((await z(['queue', 'low', '-t', 't'])).code).toBe(0);
    expect((await z(['queue', 'high', '-t', 't', '--priority', '9'])).code).toBe(0);
    expect((await z(['queue', 'mid', '-t', 't', '-p', '4'])).code).toBe(0);
    const order: string[] = [];
    for (let claim = await engine.claim(); claim; claim = await engine.claim()) {
      order.push(claim.key.join('|'));
      await engine.complete(claim, null);
    }
    expect(order).toEqual(['high', 'mid', 'low']);
  });

  it('submit --priority stores the job with that priority', async () => {
    const { z, engine } = await fx();
    const job = join(tmp, 'job.json');
    writeFileSync(job, JSON.stringify({ executable: '/bin/true', arguments: [] }));
    const r = await z(['--json', 'submit', job, '--priority', '7', '--name', 'urgent']);
    expect(r.code, r.stderr).toBe(0);
    const { key } = json<{ key: string }>(r);
    expect((await engine.task(key.split('|')))?.priority).toBe(7);
    const plain = json<{ key: string }>(await z(['--json', 'submit', job]));
    expect((await engine.task(plain.key.split('|')))?.priority ?? 0).toBe(0);
  });
});

describe('pause --type and resume --type with a live worker', { timeout: SLOW }, () => {
  it('the paused type waits, others run; resume --type lets it run', async () => {
    const { z, c, engine } = await fx();
    const paused = await z(['--json', 'pause', 'tw', '--type', 'held']);
    expect(json(paused)).toEqual({ world: 'tw', paused: { world: false, types: ['held'] } });
    // The held task is queued first and ranks higher: were it claimable, it would go first.
    expect((await z(['queue', 'h1', '-t', 'held', '-p', '9'])).code).toBe(0);
    expect((await z(['queue', 'f1', '-t', 'free'])).code).toBe(0);
    const worker = runWorker(c, { held: () => 'h', free: () => 'f' }, { world: 'tw', pollMs: 100 });
    try {
      const state = async (k: string) => (await engine.task([k]))?.state;
      await until(async () => (await state('f1')) === 'completed', 'the free task to run');
      expect(await state('h1')).toBe('pending');
      const resumed = await z(['--json', 'resume', 'tw', '--type', 'held']);
      expect(json(resumed)).toEqual({ world: 'tw', paused: { world: false, types: [] } });
      await until(async () => (await state('h1')) === 'completed', 'the held task to run');
    } finally {
      await worker.stop();
    }
  });
});

describe('wait --exchange', { timeout: SLOW }, () => {
  it('takes the result from the exchange it names, not from the default one', async () => {
    const { z, c } = await fx();
    await publishResult(c, { routingkey: 'rk', exchange: 'ex1' }, { from: 'ex1' }, { world: 'tw' });
    const other = await z(['wait', 'rk', '--any', '--timeout', '1']);
    expect(other.code).toBe(6);
    const got = await z(['wait', 'rk', '--exchange', 'ex1', '--any', '--timeout', '60']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(/"from":\s*"ex1"/);
  });
});

describe('init and retention flags, as ZooKeeper holds them', { timeout: SLOW }, () => {
  it('every retention flag of init and of retention is stored', async () => {
    const flags = ['--completed', '3h', '--max-completed', '11', '--results', '2h'];
    const { z, c } = await fx([...flags, '--max-results', '12', '--max-failed', '13']);
    expect((await readRetention(c, 'tw')).settings).toEqual({
      completed: { maxAgeMs: 3 * 3_600_000, maxCount: 11 },
      results: { maxAgeMs: 2 * 3_600_000, maxCount: 12 },
      failed: { warnCount: 13 },
    });
    const set = ['--completed', '1h', '--max-completed', '21', '--results', '30m'];
    const r = await z(['retention', 'tw', ...set, '--max-results', '22', '--max-failed', '23']);
    expect(r.code, r.stderr).toBe(0);
    expect((await readRetention(c, 'tw')).settings).toEqual({
      completed: { maxAgeMs: 3_600_000, maxCount: 21 },
      results: { maxAgeMs: 30 * 60_000, maxCount: 22 },
      failed: { warnCount: 23 },
    });
  });
});

describe('clean: each flag alone removes only its own kind', { timeout: SLOW }, () => {
  it('--failed, --results, --completed, and --older-than once they are old enough', async () => {
    const { z, c, engine } = await fx();
    await engine.queue({ name: 'ok', type: 't' });
    await engine.queue({ name: 'bad', type: 't', maxAttempts: 1 });
    for (let claim = await engine.claim(); claim; claim = await engine.claim())
      if (claim.key[0] === 'ok') await engine.complete(claim, 1);
      else await engine.fail(claim, new Error('boom'));
    await publishResult(c, { routingkey: 'rk' }, { ok: true }, { world: 'tw' });
    const results = () => c.children('/zoott_~replies/tw/_default/rk');
    expect(await engine.counts()).toMatchObject({ completed: 1, failed: 1 });

    const failed = json(await z(['--json', 'clean', 'tw', '--failed']));
    expect(failed).toMatchObject({ failed: { matched: 1, removed: 1 } });
    expect(failed).not.toHaveProperty('completed');
    expect(await engine.counts()).toMatchObject({ completed: 1, failed: 0 });
    expect(await results()).toHaveLength(1);

    const res = json(await z(['--json', 'clean', 'tw', '--results']));
    expect(res).toMatchObject({ results: { matched: 1, removed: 1 } });
    expect(await results()).toEqual([]);
    expect((await engine.counts()).completed).toBe(1);

    // --older-than counts from when the task completed: once 200 ms have passed, it matches.
    const done = (await engine.task(['ok']))?.completedAt ?? 0;
    expect(done).toBeGreaterThan(0);
    await until(() => Date.now() > done + 250, 'the completed task to be 200 ms old');
    const young = json(await z(['--json', 'clean', 'tw', '--completed', '--older-than', '1h']));
    expect(young).toMatchObject({ completed: { matched: 0, removed: 0 } });
    const old = json(await z(['--json', 'clean', 'tw', '--completed', '--older-than', '200ms']));
    expect(old).toMatchObject({ completed: { matched: 1, removed: 1 } });
    expect((await engine.counts()).completed).toBe(0);
  });
});

describe('import --users and --update', { timeout: SLOW }, () => {
  it('--users gives the passwords of the users an __acl__ names; --update overwrites values', async () => {
    const connect = await freshConnect();
    const tree = join(tmp, 'tree.yaml');
    writeFileSync(tree, 'app:\n  __val__: 1\n  __acl__: { xp: cdrwa }\n');
    const users = join(tmp, 'users.yaml');
    writeFileSync(users, 'xp: "123"\n');
    const auth = ['--connect', connect, '--auth', 'xp:123'];
    const imp = await zoott([...auth, 'import', tree, '--users', users]);
    expect(imp.code, imp.stderr).toBe(0);
    // Only xp may read it now: the digest was made from the password in the users file.
    const stranger = await session(connect);
    await expect(stranger.get('/app')).rejects.toThrow(/NO_AUTH/);
    const xp = await connectZk(connect, { auth: [{ scheme: 'digest', auth: 'xp:123' }] });
    try {
      const value = async () => JSON.parse(Buffer.from((await xp.get('/app')).data).toString());
      expect(await value()).toBe(1);
      writeFileSync(tree, 'app:\n  __val__: 2\n  __acl__: { xp: cdrwa }\n');
      const kept = await zoott([...auth, 'import', tree, '--users', users]);
      expect(kept.stdout).toMatch(/values kept; --update overwrites them/);
      expect(await value()).toBe(1);
      const updated = await zoott([...auth, 'import', tree, '--users', users, '--update']);
      expect(updated.code, updated.stderr).toBe(0);
      expect(await value()).toBe(2);
    } finally {
      await xp.close();
    }
  });
});
