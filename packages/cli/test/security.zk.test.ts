/**
 * Security findings that the CLI exposes, checked with the built `zoott` against a real
 * ZooKeeper: parent patterns that would stall a backtracking engine, worlds initialised with
 * credentials over an open world, and `lock-down`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Acl, createEngine, digestAcl, OPEN_ACL, runWorker, utf8 } from '@zoott/core';
import { encodeJson, worldTops } from '@zoott/core/internal';
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
    for (const p of [
      '/zoott_~replies/victim/_default',
      '/zoott_~replies/victim/_default/victim-results',
    ])
      await raw.create(p).catch(() => undefined);

    // Its race world (internal: `<world>~races`, which no user may name, so a worker makes it;
    // here the stranger's raw session) and a race's shared state belong to it too.
    await createEngine(raw, { world: 'victim~races', buckets: 1 }).init();
    await raw.create(
      '/zoott_~races/victim/race-1',
      encodeJson({ started: 'now', racers: 2, world: 'victim' }),
    );
    await raw.create('/zoott_~races/victim/race-1/winner', encodeJson({ index: 0 }));

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
      raceWorld: string | null;
    }>(locked);
    expect(report.world).toBe('victim');
    expect(report.raceWorld).toBe('victim~races');
    const changed = report.changed.map((c) => c.path);
    expect(changed).toContain('/zoott_victim');
    expect(changed).toContain('/zoott_victim/planted');
    expect(changed).toContain('/zoott_~replies/victim/_default/victim-results');
    expect(changed).toContain('/zoott_~races/victim/race-1/winner');
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
    // Every node of the world and of its race world: their nodes in every area (reply paths
    // and race state among them) and their trees.
    for (const top of [...worldTops('victim'), ...worldTops('victim~races')]) await walk(top);
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

describe('export and import leave zoott ephemeral places alone', { timeout: SLOW }, () => {
  it('an export taken while a task runs imports into a world that runs it, with no ghost claim or worker', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, '--world', 'live', ...args]);
    expect((await z(['init', 'live', '--buckets', '2'])).code).toBe(0);
    expect((await z(['queue', 'busy', '-t', 't'])).code).toBe(0);
    expect((await z(['queue', 'child', '-t', 't', '--parent', 'busy'])).code).toBe(0);
    // A worker is registered and holds a claim on `busy` (both ephemeral) while we export.
    const workerSession = await session(connect);
    const engine = createEngine(workerSession, { world: 'live' });
    const claim = await engine.claim({ types: ['t'] });
    expect(claim?.key).toEqual(['busy']);
    await workerSession.create('/zoott_workers/live/worker-', encodeJson({ id: 'w1' }), {
      ephemeral: true,
      sequential: true,
    });
    const file = join(tmp, 'live.json');
    const exp = await zoott(['--connect', connect, 'export', '/', '-o', file]);
    expect(exp.code, exp.stderr).toBe(0);
    const exported = JSON.parse(readFileSync(file, 'utf8'));
    const kids = (node: Record<string, unknown>) =>
      Object.keys(node).filter((k) => !k.startsWith('__'));
    expect(kids(exported.zoott_w.live['0000'])).toEqual([]);
    expect(kids(exported.zoott_w.live['0001'])).toEqual([]);
    expect(kids(exported.zoott_workers.live)).toEqual([]);
    expect(kids(exported.zoott_live)).toEqual(['busy']); // the task itself is exported

    // Into a new chroot: the task is pending there, and a worker runs it and its child.
    const target = await freshConnect();
    const imp = await zoott(['--connect', target, '--json', 'import', file]);
    expect(imp.code, imp.stderr).toBe(0);
    expect(json<{ skipped: string[] }>(imp).skipped).toEqual([]);
    const t = (args: string[]) => zoott(['--connect', target, '--world', 'live', ...args]);
    expect(json(await t(['--json', 'ls', 'working']))).toMatchObject({ tasks: [], corrupt: [] });
    expect(json(await t(['--json', 'workers']))).toMatchObject({ workers: [], corrupt: [] });
    const runner = runWorker(await session(target), { t: (task) => task.name }, { world: 'live' });
    try {
      const drained = await t(['drain', '--timeout', '60']);
      expect(drained.code, drained.stderr).toBe(0);
    } finally {
      await runner.stop();
    }
    expect(json<{ state: string }>(await t(['--json', 'show', 'busy/child'])).state).toBe(
      'completed',
    );

    // An export made with the ghosts in it (an older zoott, or by hand): import skips them.
    exported.zoott_w.live['0000'].busy = { __val__: { worker: 'w1', session: '1', at: 1 } };
    exported.zoott_workers.live['worker-0000000007'] = { __val__: { id: 'w1' } };
    const old = join(tmp, 'old.json');
    writeFileSync(old, JSON.stringify(exported));
    const third = await freshConnect();
    const imp2 = await zoott(['--connect', third, '--json', 'import', old]);
    expect(imp2.code, imp2.stderr).toBe(0);
    expect(json<{ skipped: string[] }>(imp2).skipped.sort()).toEqual([
      '/zoott_w/live/0000/busy',
      '/zoott_workers/live/worker-0000000007',
    ]);
    const raw = await session(third);
    expect(await raw.children('/zoott_w/live/0000')).toEqual([]);
    expect(await raw.children('/zoott_workers/live')).toEqual([]);
  });
});

describe('doctor', { timeout: SLOW }, () => {
  it('reports weak ACLs, open reply paths and ghost claims; --repair moves the ghost; lock-down fixes the rest', async () => {
    const connect = await freshConnect();
    const owner = (args: string[]) =>
      zoott(['--connect', connect, '--auth', 'alice:s3cret', '--world', 'dw', ...args]);
    expect((await owner(['init', 'dw', '--buckets', '1'])).code).toBe(0);
    expect((await owner(['queue', 'a', '-t', 't'])).code).toBe(0);
    expect((await owner(['queue', 'b', '-t', 't'])).code).toBe(0);
    const job = join(tmp, 'dw-job.json');
    writeFileSync(job, JSON.stringify({ executable: '/bin/true', routingkey: 'dw-res' }));
    expect((await owner(['submit', job, '--name', 'j'])).code).toBe(0);
    const healthy = await owner(['doctor', 'dw']);
    expect(healthy.code, healthy.stderr).toBe(0);
    expect(healthy.stdout).toMatch(/world dw: no problems found/);

    // Damage by hand: an opened task node, a reply path left open (nobody else may make one
    // in a locked world's reply area), a persistent claim.
    const want = [digestAcl('alice', 's3cret', 'cdrwa')];
    const raw = await session(connect);
    await raw.addAuth('digest', 'alice:s3cret');
    await raw.setAcl('/zoott_dw/a', OPEN_ACL);
    const stranger = await session(connect);
    const planted = await stranger
      .create('/zoott_~replies/dw/_default')
      .catch((e: { code: string }) => e.code);
    expect(planted).toBe('NO_AUTH');
    await raw.create('/zoott_~replies/dw/_default', undefined, { acl: want });
    await raw.create('/zoott_~replies/dw/_default/dw-res', undefined, { acl: OPEN_ACL });
    await raw.create('/zoott_w/dw/0000/b', encodeJson({ worker: 'ghost', session: '0', at: 1 }), {
      acl: want,
    });

    await raw.create('/zoott_workers/dw/worker-0000000009', encodeJson({ id: 'ghost' }), {
      acl: want,
    });
    // The views do not take them for a running task or a live worker.
    // The ghost claim's task waits to be claimed again; the ghost registration is reported.
    expect(json(await owner(['--json', 'ls', 'working']))).toMatchObject({ tasks: [] });
    expect(
      json<{ tasks: { key: string }[] }>(await owner(['--json', 'ls', 'pending']))
        .tasks.map((t) => t.key)
        .sort(),
    ).toEqual(['a', 'b', 'j']);
    const ghosts = await owner(['--json', 'workers']);
    expect(ghosts.code, ghosts.stderr).toBe(0);
    expect(json(ghosts)).toMatchObject({
      workers: [],
      corrupt: [
        {
          path: '/zoott_workers/dw/worker-0000000009',
          reason: expect.stringMatching(/persistent node, not a live worker/),
        },
      ],
    });

    const diag = await owner(['--json', 'doctor', 'dw']);
    expect(diag.code, diag.stderr).toBe(7);
    const report = json<{
      healthy: boolean;
      findings: { kind: string; path: string; repair: string }[];
    }>(diag);
    expect(report.healthy).toBe(false);
    expect(report.findings.map((f) => `${f.kind} ${f.path} ${f.repair}`)).toEqual(
      [
        'weak-acl /zoott_dw/a none',
        'not-ephemeral /zoott_w/dw/0000/b quarantine',
        'not-ephemeral /zoott_workers/dw/worker-0000000009 quarantine',
        'reply-acl /zoott_~replies/dw/_default/dw-res none',
      ], // sorted by path
    );

    const repaired = await owner(['doctor', 'dw', '--repair']);
    expect(repaired.code, repaired.stderr).toBe(7); // the ACLs are lock-down's to fix
    expect(repaired.stdout).toMatch(
      /moving 2 node\(s\) to \/zoott_q\/dw:\n {2}\/zoott_w\/dw\/0000\/b {2}\(not-ephemeral\)\n {2}\/zoott_workers\/dw\/worker-0000000009/,
    );
    expect(repaired.stdout).toMatch(/4 problem\(s\), 2 moved to \/zoott_q\/dw, 2 left/);
    expect(await raw.exists('/zoott_w/dw/0000/b')).toBeNull();
    const items = await raw.children('/zoott_q/dw');
    const from = await Promise.all(
      items.map(
        async (i) => JSON.parse(utf8.decode((await raw.get(`/zoott_q/dw/${i}`)).data)).from,
      ),
    );
    expect(from.sort()).toEqual(['/zoott_w/dw/0000/b', '/zoott_workers/dw/worker-0000000009']);

    expect((await owner(['lock-down', 'dw'])).code).toBe(0);
    const clean = await owner(['--json', 'doctor', 'dw']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(json<{ healthy: boolean; findings: unknown[] }>(clean)).toMatchObject({
      healthy: true,
      findings: [],
    });
  });
});
