/**
 * Security findings that the CLI exposes, checked with the built `zoott` against a real
 * ZooKeeper: parent patterns that would stall a backtracking engine, worlds initialised with
 * credentials over an open world, and `lock-down`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Acl, digestAcl } from '@zoott/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, json, session, zoott } from './helpers.js';

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

const tmp = mkdtempSync(join(tmpdir(), 'zoott-sec-'));

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

describe('init --auth over an open world, and lock-down', { timeout: SLOW }, () => {
  it('init refuses a world made open by someone else; lock-down locks all of it, reply paths too', async () => {
    const connect = await freshConnect();
    const stranger = (args: string[]) => zoott(['--connect', connect, ...args]);
    const owner = (args: string[]) =>
      zoott(['--connect', connect, '--auth', 'alice:s3cret', ...args]);
    // Someone runs init first, without credentials, and queues into the world.
    expect((await stranger(['init', 'victim', '--buckets', '2'])).code).toBe(0);
    expect(
      (await stranger(['--world', 'victim', 'queue', 'planted', '-t', 't', '-d', '{"x":1}'])).code,
    ).toBe(0);
    const job = join(tmp, 'job.json');
    writeFileSync(job, JSON.stringify({ executable: '/bin/true', routingkey: 'victim-results' }));
    expect((await stranger(['--world', 'victim', 'submit', job, '--name', 'j1'])).code).toBe(0);
    const raw = await session(connect);
    // The reply path exists open (a worker, or the stranger, made it).
    for (const p of ['/zoott_r', '/zoott_r/_default', '/zoott_r/_default/victim-results'])
      await raw.create(p).catch(() => undefined);

    const refused = await owner(['init', 'victim']);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toMatch(/world victim exists but is not locked to these credentials/);
    expect(refused.stderr).toMatch(/world:anyone cdrwa/);
    expect(refused.stderr).toMatch(/lock-down victim/);
    expect(refused.stdout).not.toMatch(/ready/);

    const locked = await owner(['--json', 'lock-down', 'victim']);
    expect(locked.code, locked.stderr).toBe(0);
    const report = json<{
      world: string;
      checked: number;
      changed: { path: string; before: Acl[] }[];
      replyPaths: string[];
    }>(locked);
    expect(report.world).toBe('victim');
    expect(report.replyPaths).toEqual(['/zoott_r/_default/victim-results']);
    const changed = report.changed.map((c) => c.path);
    expect(changed).toContain('/zoott_victim');
    expect(changed).toContain('/zoott_victim/planted');
    expect(changed).toContain('/zoott_r/_default/victim-results');
    expect(changed.at(-1)).toBe('/zoott_victim'); // the tree root is written last
    expect(report.changed.every((c) => c.before[0]?.scheme === 'world')).toBe(true);

    // Checked from raw clients: every node of the world and its reply path is the owner's.
    const want = [digestAcl('alice', 's3cret', 'cdrwa')];
    const ownerRaw = await session(connect);
    await ownerRaw.addAuth('digest', 'alice:s3cret');
    const all: string[] = [];
    const walk = async (path: string): Promise<void> => {
      all.push(path);
      for (const k of await ownerRaw.children(path)) await walk(`${path}/${k}`);
    };
    for (const top of [
      '/zoott_victim',
      '/zoott_p/victim',
      '/zoott_w/victim',
      '/zoott_c/victim',
      '/zoott_f/victim',
      '/zoott_workers/victim',
      '/zoott_r/_default/victim-results',
    ])
      await walk(top);
    expect(all.length).toBe(report.checked);
    const notLocked = [];
    for (const p of all)
      if (JSON.stringify((await ownerRaw.getAcl(p)).acl) !== JSON.stringify(want))
        notLocked.push(p);
    expect(notLocked).toEqual([]);
    expect(await raw.children('/zoott_victim').catch((e: { code: string }) => e.code)).toBe(
      'NO_AUTH',
    );
    // The stranger is shut out now, through the CLI too.
    const denied = await stranger(['--world', 'victim', 'show', 'planted']);
    expect(denied.code, denied.stderr).toBe(4);
    expect((await stranger(['--world', 'victim', 'queue', 'evil', '-t', 't'])).code).toBe(4);

    // Idempotent: a second run changes nothing; init now says ready.
    const again = await owner(['lock-down', 'victim']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /world victim locked to digest:alice:… cdrwa: \d+ nodes checked, 0 changed/,
    );
    const ready = await owner(['init', 'victim']);
    expect(ready.code, ready.stderr).toBe(0);
    expect(ready.stdout).toMatch(/world victim ready/);
  });

  it('lock-down without credentials is a usage error; on a missing world, not found', async () => {
    const connect = await freshConnect();
    const noAuth = await zoott(['--connect', connect, 'lock-down', 'nowhere']);
    expect(noAuth.code).toBe(2);
    expect(noAuth.stderr).toMatch(/needs credentials/);
    const missing = await zoott(['--connect', connect, '--auth', 'a:b', 'lock-down', 'nowhere']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/not initialised/);
  });
});
