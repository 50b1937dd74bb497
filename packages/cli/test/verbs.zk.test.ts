import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, digestAcl, runWorker } from '@zoott/core';
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

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

const tmp = mkdtempSync(join(tmpdir(), 'zoott-cli-'));

beforeAll(assertBuilt);

describe('init, queue, tree, ls, show', { timeout: SLOW }, () => {
  it('init creates the chroot and the world; --json reports it', async () => {
    const server = (await freshConnect()).replace(/\/.*$/, '');
    const r = await zoott([
      '--connect',
      `${server}/new-app-${Date.now()}`,
      '--json',
      'init',
      'files',
      '--buckets',
      '8',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ world: 'files', buckets: 8, root: '/zoott_files' });
  });

  it('queues with data inline and @file, parent patterns and a child-name template', async () => {
    const { z } = await freshWorld();
    const dataFile = join(tmp, 'data.json');
    writeFileSync(dataFile, JSON.stringify({ url: 'http://x/b' }));
    expect(
      (await z(['queue', 'requestFile_a', '-t', 'requestFile', '-d', '{"url":"http://x/a"}'])).code,
    ).toBe(0);
    expect(
      (await z(['queue', 'requestFile_b', '-t', 'requestFile', '-d', `@${dataFile}`, '-p', '5']))
        .code,
    ).toBe(0);
    const q = await z([
      '--json',
      'queue',
      'downloadFile',
      '-t',
      'downloadFile',
      '--parent-name',
      'requestFile_(.*)',
      '--parent-type',
      'request.*',
      '--child-name',
      'downloadFile_{1}',
      '--attempts',
      '2',
      '--hint',
      'server=h1',
    ]);
    expect(q.code, q.stderr).toBe(0);
    const queued = json<{ queued: { key: string; previous: null }[] }>(q)
      .queued.map((t) => t.key)
      .sort();
    expect(queued).toEqual(['requestFile_a|downloadFile_a', 'requestFile_b|downloadFile_b']);

    const show = json<Record<string, unknown>>(
      await z(['--json', 'show', 'requestFile_b/downloadFile_b']),
    );
    expect(show).toMatchObject({
      key: 'requestFile_b|downloadFile_b',
      type: 'downloadFile',
      state: 'pending',
      maxAttempts: 2,
      hints: { server: 'h1' },
    });
    expect(
      json<Record<string, unknown>>(await z(['--json', 'show', 'requestFile_b'])).data,
    ).toEqual({ url: 'http://x/b' });

    const ls = json<{ tasks: { key: string; state: string; priority: number }[] }>(
      await z(['--json', 'ls', 'pending']),
    ).tasks;
    expect(ls.map((t) => t.key).sort()).toEqual([
      'requestFile_a',
      'requestFile_a|downloadFile_a',
      'requestFile_b',
      'requestFile_b|downloadFile_b',
    ]);
    expect(ls.find((t) => t.key === 'requestFile_b')?.priority).toBe(5);

    const tree = json<{ tasks: { key: string; children: { key: string; state: string }[] }[] }>(
      await z(['--json', 'tree']),
    );
    expect(tree.tasks.map((t) => [t.key, t.children.map((c) => c.key)])).toEqual([
      ['requestFile_a', ['requestFile_a|downloadFile_a']],
      ['requestFile_b', ['requestFile_b|downloadFile_b']],
    ]);
  });

  it('queue --from a JSON-lines file, with exact and pattern parents', async () => {
    const { z } = await freshWorld();
    const file = join(tmp, 'tasks.jsonl');
    const lines = [
      ...Array.from({ length: 20 }, (_, i) => ({ name: `r${i}`, type: 'req', data: { i } })),
      { name: 'child', type: 'dl', parent: 'r3' },
      { name: 'dl', type: 'dl', parent: { name: 'r1(\\d)', type: 'req' }, childName: 'dl_{1}' },
    ];
    writeFileSync(file, `# a comment\n${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const r = await z(['--json', 'queue', '--from', file]);
    expect(r.code, r.stderr).toBe(0);
    const out = json<{ lines: number; queued: number; keys: string[] }>(r);
    expect(out.lines).toBe(22);
    expect(out.queued).toBe(31);
    expect(out.keys).toContain('r3|child');
    expect(out.keys).toContain('r15|dl_5');
    expect(r.stderr).toMatch(/queueing .*22\/22/); // progress ends with a final line on stderr
    expect(json<{ pending: number }>(await z(['--json', 'status'])).pending).toBe(31);
  });

  it('reports bad input clearly, without a stack trace', async () => {
    const { z } = await freshWorld();
    const badPattern = await z(['queue', 'x', '-t', 't', '--parent-name', 'a(?=b)']);
    expect(badPattern.code).toBe(2);
    expect(badPattern.stderr).toMatch(/invalid pattern/i);
    expect(badPattern.stderr).toMatch(/lookaround/);
    expect(badPattern.stderr).not.toMatch(/\n\s+at /);
    const badData = await z(['queue', 'x', '-t', 't', '-d', '{oops']);
    expect(badData.code).toBe(2);
    expect(badData.stderr).toMatch(/--data is not valid JSON/);
    const badName = await z(['queue', 'has space', '-t', 't']);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toMatch(/whitespace/);
    const unknown = await z(['show', 'nope|nothing']);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toMatch(/no task nope\|nothing in world tw/);
    const noMatch = await z(['queue', 'c', '-t', 't', '--parent-name', 'nobody']);
    expect(noMatch.code).toBe(5);
    const noWorld = await z(['--world', 'other', 'status']);
    expect(noWorld.code).toBe(5);
    expect(noWorld.stderr).toMatch(/zoott init other/);
    const debug = await z(['--debug', 'show', 'nope']);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it('says what to do when the server is unreachable', async () => {
    const r = await zoott(['--connect', '127.0.0.1:9', '--connect-timeout', '1s', 'status']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot reach ZooKeeper at 127\.0\.0\.1:9/);
    expect(r.stderr).toMatch(/hint:/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('takes the connect string from ZOOTT_CONNECT and from a config file', async () => {
    const connect = await freshConnect();
    const viaEnv = await zoott(['init', 'envworld'], { env: { ZOOTT_CONNECT: connect } });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    const cfg = join(tmp, 'zoott.config.yaml');
    writeFileSync(cfg, `connect: ${connect}\nworld: envworld\n`);
    const viaFile = await zoott(['--json', 'status'], { cwd: tmp });
    expect(viaFile.code, viaFile.stderr).toBe(0);
    expect(json(viaFile).world).toBe('envworld');
    const badCfg = await zoott(['status'], { env: { ZOOTT_CONFIG: join(tmp, 'missing.yaml') } });
    expect(badCfg.code).toBe(5);
  });
});

describe('workers, status, retry, cancel, drain, watch', { timeout: SLOW }, () => {
  it('status and workers show a live worker and what it runs; drain waits for it', async () => {
    const { connect, z } = await freshWorld();
    for (const n of ['a', 'b', 'c']) expect((await z(['queue', n, '-t', 'slow'])).code).toBe(0);
    const early = await z(['drain', '--timeout', '1']);
    expect(early.code).toBe(6);

    const c = await session(connect);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const worker = runWorker(
      c,
      { slow: async () => gate },
      { world: 'tw', id: 'wk-1', host: 'test-host', concurrency: 3 },
    );
    try {
      await until(
        async () => json<{ working: number }>(await z(['--json', 'status'])).working === 3,
        'three working tasks',
      );
      const status = json<{
        pending: number;
        working: number;
        completed: number;
        failed: number;
        workers: { id: string; running: string[] }[];
      }>(await z(['--json', 'status']));
      expect(status).toMatchObject({ pending: 0, working: 3, completed: 0, failed: 0 });
      expect(status.workers).toHaveLength(1);
      expect(status.workers[0]).toMatchObject({ id: 'wk-1', running: ['a', 'b', 'c'] });
      const workers = json<{
        workers: { id: string; host: string; alive: boolean; types: string[]; buckets: number[] }[];
      }>(await z(['--json', 'workers'])).workers;
      expect(workers).toMatchObject([
        { id: 'wk-1', host: 'test-host', alive: true, types: ['slow'] },
      ]);
      expect(workers[0]!.buckets).toHaveLength(64);
      const text = await z(['workers']);
      expect(text.stdout).toMatch(/wk-1\s+test-host\s+alive/);
      expect(
        json<{ tasks: { worker: string }[] }>(await z(['--json', 'ls', 'working'])).tasks.map(
          (t) => t.worker,
        ),
      ).toEqual(['wk-1', 'wk-1', 'wk-1']);

      const drain = start([
        '--connect',
        connect,
        '--world',
        'tw',
        '--json',
        'drain',
        '--interval',
        '0.1',
      ]);
      release();
      const drained = await drain.exited;
      expect(drained.code, drained.stderr).toBe(0);
      expect(json(drained)).toMatchObject({
        drained: true,
        pending: 0,
        working: 0,
        completed: 3,
        failed: 0,
      });
    } finally {
      release();
      await worker.stop();
    }
    const after = json<{ workers: unknown[] }>(await z(['--json', 'status']));
    expect(after.workers).toEqual([]);
  });

  it('retry brings failed tasks back; cancel removes a subtree', async () => {
    const { connect, z } = await freshWorld();
    for (const n of ['f1', 'f2'])
      expect((await z(['queue', n, '-t', 'boom', '--attempts', '1'])).code).toBe(0);
    expect((await z(['queue', 'kid', '-t', 'boom', '--parent', 'f1'])).code).toBe(0);
    const engine = createEngine(await session(connect), { world: 'tw' });
    for (let i = 0; i < 2; i++) {
      const claim = await engine.claim({ worker: 'test' });
      expect(claim).not.toBeNull();
      expect((await engine.fail(claim!, new Error('kaput'))).status).toBe('failed');
    }
    const failed = json<{ tasks: { key: string }[] }>(await z(['--json', 'ls', 'failed'])).tasks;
    expect(failed.map((t) => t.key).sort()).toEqual(['f1', 'f2']);
    expect(
      json<{ error: { message: string } }>(await z(['--json', 'show', 'f1'])).error.message,
    ).toMatch(/kaput/);
    const notFailed = await z(['retry', 'f1|kid']);
    expect(notFailed.code).toBe(7);
    const one = await z(['--json', 'retry', 'f2']);
    expect(json(one)).toEqual({ retried: ['f2'] });
    const all = await z(['--json', 'retry', '--all-failed']);
    expect(json(all)).toEqual({ retried: ['f1'] });
    expect(json<{ failed: number; pending: number }>(await z(['--json', 'status']))).toMatchObject({
      failed: 0,
      pending: 3,
    });
    const cancel = await z(['--json', 'cancel', 'f1', '--subtree']);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(json<{ cancelled: string[] }>(cancel).cancelled.sort()).toEqual(['f1', 'f1|kid']);
    expect((await z(['cancel', 'ghost'])).code).toBe(5);
    expect(json<{ pending: number }>(await z(['--json', 'status'])).pending).toBe(1);
  });

  it('watch streams events as JSON lines and stops after --count', async () => {
    const { z, connect } = await freshWorld();
    const watch = start(['--connect', connect, '--world', 'tw', '--json', 'watch', '--count', '2']);
    await until(() => watch.err().includes('watching world tw'), 'watch to start');
    let n = 0;
    // Events before the stream's first listing are not reported, so keep queueing.
    while (watch.exitCode === null && n < 40) {
      await z(['queue', `t${n++}`, '-t', 'x']);
    }
    const r = await watch.exited;
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; key: string; world: string });
    expect(events).toHaveLength(2);
    for (const e of events)
      expect(e).toMatchObject({
        type: 'queued',
        world: 'tw',
        key: expect.stringMatching(/^t\d+$/),
      });
  });
});

describe('export and import', { timeout: SLOW }, () => {
  it('round-trips a hierarchy with values, ACLs and users', async () => {
    const connect = await freshConnect();
    const file = join(tmp, 'app.yaml');
    writeFileSync(
      file,
      [
        'app:',
        '  __val__: { jobs: 10 }',
        '  __acl__: { xp: cdrwa, "world:anyone": r }',
        '  settings:',
        '    __val__: [1, 2, 3]',
        '  empty:',
        ...Array.from({ length: 30 }, (_, i) => `  n${i}: { __val__: ${i} }`),
      ].join('\n'),
    );
    const imp = await zoott([
      '--connect',
      connect,
      '--auth',
      'xp:123',
      '--json',
      'import',
      file,
      '--user',
      'xp:123',
    ]);
    expect(imp.code, imp.stderr).toBe(0);
    expect(json(imp)).toEqual({
      file,
      root: '/',
      nodes: 33,
      created: 33,
      existing: 0,
      skipped: [],
    });
    expect(imp.stderr).toMatch(/importing .*33\/33/);

    const out = join(tmp, 'app.json');
    const exp = await zoott([
      '--connect',
      connect,
      '--auth',
      'xp:123',
      'export',
      '/app',
      '-o',
      out,
    ]);
    expect(exp.code, exp.stderr).toBe(0);
    const exported = JSON.parse(readFileSync(out, 'utf8'));
    expect(exported.__val__).toEqual({ jobs: 10 });
    expect(exported.__acl__).toEqual({ xp: 'cdrwa', 'world:anyone': 'r' });
    expect(exported.settings.__val__).toEqual([1, 2, 3]);

    // Import the export elsewhere and export again: the same document.
    const copy = await zoott([
      '--connect',
      connect,
      '--auth',
      'xp:123',
      'import',
      out,
      '--root',
      '/copy',
      '--user',
      'xp:123',
    ]);
    expect(copy.code, copy.stderr).toBe(0);
    const again = await zoott([
      '--connect',
      connect,
      '--auth',
      'xp:123',
      '--json',
      'export',
      '/copy',
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(json(again)).toEqual(exported);

    // Without the right credentials the ACL says no: exit 4 and a hint about --auth.
    const c = await session(connect);
    await c.create('/secret', new Uint8Array(), { acl: [digestAcl('xp', '123', 'cdrwa')] });
    const denied = await zoott(['--connect', connect, '--auth', 'xp:wrong', 'export', '/secret']);
    expect(denied.code).toBe(4);
    expect(denied.stderr).toMatch(/not authorised/);
    expect(denied.stderr).toMatch(/--auth/);
  });

  it('refuses a hierarchy file with a user but no password', async () => {
    const connect = await freshConnect();
    const file = join(tmp, 'nouser.json');
    writeFileSync(file, JSON.stringify({ a: { __acl__: { bob: 'r' } } }));
    const r = await zoott(['--connect', connect, 'import', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bob/);
  });
});

describe('lock', { timeout: SLOW }, () => {
  it('runs the command under the lock, exits with its code, and blocks a second holder', async () => {
    const connect = await freshConnect();
    const plain = await zoott([
      '--connect',
      connect,
      'lock',
      'job',
      '--',
      process.execPath,
      '-e',
      'process.exit(3)',
    ]);
    expect(plain.code).toBe(3);

    // The holder keeps the lock until the test creates `release`, so nothing here depends on
    // how fast processes start.
    const release = join(tmp, `release-${Date.now()}`);
    const holdScript =
      'console.log("held"); const t = setInterval(() => { if (require("fs").existsSync(process.argv[1])) clearInterval(t); }, 50)';
    const holder = start([
      '--connect',
      connect,
      'lock',
      'job',
      '--',
      process.execPath,
      '-e',
      holdScript,
      release,
    ]);
    await until(() => holder.out().includes('held'), 'the first lock holder to run');
    const busy = await zoott([
      '--connect',
      connect,
      'lock',
      'job',
      '--timeout',
      '0.5',
      '--',
      process.execPath,
      '-e',
      'console.log("ran")',
    ]);
    expect(busy.code).toBe(6);
    expect(busy.stdout).not.toContain('ran');

    const waiter = start([
      '--connect',
      connect,
      'lock',
      'job',
      '--timeout',
      '120',
      '--',
      process.execPath,
      '-e',
      'console.log("second")',
    ]);
    await until(
      () => waiter.err().includes('waiting for /lock/job'),
      'the second holder to wait',
      60_000,
    );
    expect(waiter.out()).toBe('');
    writeFileSync(release, '');
    const first = await holder.exited;
    expect(first.code).toBe(0);
    const second = await waiter.exited;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe('second\n');
    const missing = await zoott([
      '--connect',
      connect,
      'lock',
      'job',
      '--',
      'no-such-command-zoott',
    ]);
    expect(missing.code).toBe(127);
  });

  it('loses the lock with the session when the holder dies', async () => {
    const connect = await freshConnect();
    const cfg = join(tmp, 'short-session.yaml');
    writeFileSync(cfg, `connect: ${connect}\nsessionTimeoutMs: 4000\n`);
    const holder = start([
      '--config',
      cfg,
      'lock',
      'crash',
      '--',
      process.execPath,
      '-e',
      'console.log("held"); setTimeout(() => {}, 3000)',
    ]);
    await until(() => holder.out().includes('held'), 'the holder to run');
    holder.kill('SIGKILL');
    await holder.exited;
    const next = await zoott([
      '--config',
      cfg,
      'lock',
      'crash',
      '--timeout',
      '40',
      '--',
      process.execPath,
      '-e',
      'console.log("mine")',
    ]);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toBe('mine\n');
  });
});

describe('submit and wait', { timeout: SLOW }, () => {
  it('submits a regular job, waits for it, and exits with its code; wait reads the reply path', async () => {
    const { connect, z } = await freshWorld();
    const daemon = startWorkerBin(connect, process.execPath);
    try {
      const jobFile = join(tmp, 'job.json');
      writeFileSync(
        jobFile,
        JSON.stringify({
          executable: process.execPath,
          arguments: ['-e', 'console.log("hello"); process.exit(4)'],
          routingkey: 'rk',
        }),
      );
      const r = await z(['submit', jobFile, '--wait', '--timeout', '60']);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stdout).toBe('hello\n');
      // submit --wait printed the result, so it also took it off the reply path.
      const none = await z(['wait', 'rk', '--any', '--timeout', '0.5']);
      expect(none.code).toBe(6);
      // Without --wait the result stays there for `zoott wait --any`.
      expect((await z(['submit', jobFile])).code).toBe(0);
      const replied = await z(['--json', 'wait', 'rk', '--any', '--timeout', '30']);
      expect(replied.code, replied.stderr).toBe(0);
      expect(json<{ result: { exit: number; stdout: string } }>(replied).result).toMatchObject({
        exit: 4,
        stdout: 'hello\n',
      });

      const queued = await z(['--json', 'submit', jobFile]);
      expect(json(queued)).toMatchObject({ world: 'tw', kind: 'job' });
      const bad = join(tmp, 'bad-job.json');
      writeFileSync(bad, JSON.stringify({ arguments: ['x'] }));
      const invalid = await z(['submit', bad]);
      expect(invalid.code).toBe(2);
      expect(invalid.stderr).toMatch(/executable/);
    } finally {
      daemon.kill('SIGTERM');
    }
  });
});

describe('dashboard', { timeout: SLOW }, () => {
  it('serves the JSON API of a world until interrupted (exit 130, as every verb)', async () => {
    const { connect, z } = await freshWorld();
    expect((await z(['queue', 'alpha', '--type', 'noop'])).code).toBe(0);
    const dash = start(['--connect', connect, '--world', 'tw', 'dashboard', '--port', '0']);
    const printed = /(http:\/\/127\.0\.0\.1:\d+)\/\?token=([\w-]{20,})/;
    await until(() => printed.test(dash.err()), 'the dashboard URL with its token');
    const [, url, token] = dash.err().match(printed)!;
    // A random token by default, as notebook servers do: nothing is served without it.
    const bare = await fetch(`${url}/api/counts?world=tw`);
    expect(bare.status).toBe(401);
    await bare.body?.cancel();
    const counts = await (await fetch(`${url}/api/counts?world=tw&token=${token}`)).json();
    expect(counts).toMatchObject({ pending: 1, working: 0, completed: 0, failed: 0 });
    dash.kill('SIGINT');
    expect((await dash.exited).code).toBe(130);
  });

  it('--token and ZOOTT_DASHBOARD_TOKEN pick the token; the flag wins', async () => {
    const { connect } = await freshWorld();
    const served = /(http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/;
    for (const [args, env, expected] of [
      [['--token', 'flag-token-0123456789'], {}, 'flag-token-0123456789'],
      [[], { ZOOTT_DASHBOARD_TOKEN: 'env-token-0123456789' }, 'env-token-0123456789'],
      [
        ['--token', 'flag-token-0123456789'],
        { ZOOTT_DASHBOARD_TOKEN: 'env-token-0123456789' },
        'flag-token-0123456789',
      ],
    ] as const) {
      const dash = start(['--connect', connect, 'dashboard', '--port', '0', ...args], { env });
      await until(() => served.test(dash.err()), 'the dashboard URL with its token');
      const [, url, token] = dash.err().match(served)!;
      expect(token).toBe(expected);
      const other = await fetch(`${url}/api/counts?world=tw&token=not-${expected}`);
      expect(other.status).toBe(401);
      await other.body?.cancel();
      const ok = await fetch(`${url}/api/counts?world=tw&token=${expected}`);
      expect(ok.status).toBe(200);
      await ok.body?.cancel();
      dash.kill('SIGINT');
      expect((await dash.exited).code).toBe(130);
    }
  });

  it('--no-token serves loopback without a token, and is refused beyond loopback', async () => {
    const { connect } = await freshWorld();
    const dash = start(['--connect', connect, 'dashboard', '--port', '0', '--no-token']);
    const printed = /(http:\/\/127\.0\.0\.1:\d+)\/ /;
    await until(() => printed.test(dash.err()), 'the dashboard URL');
    expect(dash.err()).not.toMatch(/token=/);
    const [, url] = dash.err().match(printed)!;
    expect((await fetch(`${url}/api/counts?world=tw`)).status).toBe(200);
    dash.kill('SIGINT');
    expect((await dash.exited).code).toBe(130);
    const r = await zoott([
      '--connect',
      connect,
      'dashboard',
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--no-token',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--no-token is allowed on a loopback address only/);
  });

  it('refuses to bind beyond loopback without a token', async () => {
    const { connect } = await freshWorld();
    const r = await zoott(['--connect', connect, 'dashboard', '--host', '0.0.0.0', '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/token/);
  });
});

describe('a world locked with --auth', { timeout: SLOW }, () => {
  it('belongs to the credentials that created it: others get exit 4, the owner works', async () => {
    const connect = await freshConnect();
    const owner = (args: string[]) =>
      zoott(['--connect', connect, '--auth', 'alice:s3cret', '--world', 'locked', ...args]);
    expect((await owner(['init', 'locked'])).code).toBe(0);
    expect((await owner(['queue', 'secret', '--type', 't', '--data', '{"k":1}'])).code).toBe(0);
    for (const auth of [[], ['--auth', 'alice:wrong']]) {
      const r = await zoott(['--connect', connect, ...auth, '--world', 'locked', 'show', 'secret']);
      expect(r.code, r.stderr).toBe(4);
      const q = await zoott([
        '--connect',
        connect,
        ...auth,
        '--world',
        'locked',
        'queue',
        'x',
        '--type',
        't',
      ]);
      expect(q.code, q.stderr).toBe(4);
    }
    const shown = await owner(['--json', 'show', 'secret']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(json(shown)).toMatchObject({ name: 'secret', data: { k: 1 } });
  });
});
