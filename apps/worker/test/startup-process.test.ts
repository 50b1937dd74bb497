import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine, digestAcl } from '@zoott/core';
import { RACE_WORLD_BUCKETS, raceWorld } from '@zoott/jobs/internal';
import { freshNamespace, SELF, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { requireBin, startWorker } from './worker-bin.js';

// How the worker starts, or refuses to, as an operator meets it: the built binary.

interface Run {
  child: ChildProcess;
  exited: Promise<{ code: number | null; at: number }>;
  output: () => string;
  /** When a line matching `re` was first seen (Date.now()). */
  seen: (re: RegExp) => Promise<number>;
}

const runs: Run[] = [];

function startBin(args: string[], env: Record<string, string> = {}): Run {
  const worker = startWorker(args, { cwd: tmpdir(), env });
  const { child, output } = worker;
  const watchers: Array<{ re: RegExp; resolve: (t: number) => void }> = [];
  // After the helper's own listeners: the output holds this chunk when a watcher tests it.
  const onData = () => {
    for (const w of [...watchers])
      if (w.re.test(output())) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve(Date.now());
      }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = worker.exited.then(({ code }) => ({ code, at: Date.now() }));
  const run: Run = {
    child,
    exited,
    output,
    // Fails fast when the process ends without printing it, with what it did print.
    seen: (re) =>
      re.test(output())
        ? Promise.resolve(Date.now())
        : Promise.race([
            new Promise<number>((resolve) => watchers.push({ re, resolve })),
            exited.then(({ code }) =>
              Promise.reject(new Error(`exited ${code} before printing ${re}:\n${output()}`)),
            ),
          ]),
  };
  runs.push(run);
  return run;
}

async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('zoott-worker start-up', { timeout: 120_000 }, () => {
  let ns: string;
  let client: Coordinator;

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    for (const world of ['alpha', 'beta']) await createEngine(client, { world }).init();
    // A race coordination world: internal, so never offered as a world to serve.
    await createEngine(client, { world: raceWorld('alpha'), buckets: RACE_WORLD_BUCKETS }).init();
  });

  afterEach(async () => {
    for (const r of runs.splice(0)) {
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
      await r.exited;
    }
  });

  afterAll(async () => {
    await client?.close();
  });

  it('refuses a world that was never initialised, naming the worlds there are (exit 5)', async () => {
    const r = startBin([
      '--connect',
      ns,
      '--world',
      'alpah',
      '--allow-exec',
      '/bin/true',
      '--run-as',
      SELF,
    ]);
    const { code } = await r.exited;
    expect(code, r.output()).toBe(5);
    expect(r.output()).toMatch(/WORLD_NOT_INITIALISED: world alpah was never initialised/);
    expect(r.output()).toMatch(/the worlds here are: alpha, beta \(/);
    expect(r.output()).not.toMatch(/~races/);
    expect(r.output()).toMatch(/--create-world/);
    // Nothing of the typo was written.
    expect(await client.exists('/zoott_p/alpah')).toBeNull();
    expect(await client.exists('/zoott_alpah')).toBeNull();
  });

  it('--create-world creates the world, and the chroot of the connect string too', async () => {
    const chroot = `/new-${randomUUID()}`;
    const connect = `${inject('zkConnect')}${chroot}`;
    const refused = startBin([
      '--connect',
      connect,
      '--world',
      'made',
      '--allow-exec',
      '/bin/true',
      '--run-as',
      SELF,
    ]);
    expect((await refused.exited).code, refused.output()).toBe(5);
    expect(refused.output()).toMatch(/there is no world here yet/);

    const r = startBin([
      '--connect',
      connect,
      '--world',
      'made',
      '--create-world',
      '--allow-exec',
      '/bin/true',
      '--run-as',
      SELF,
    ]);
    await r.seen(/"msg":"worker started"/);
    const bare = await connectZk(inject('zkConnect'));
    try {
      expect(await bare.exists(`${chroot}/zoott_made`)).not.toBeNull();
      await until('the worker to register', async () =>
        (await bare.children(`${chroot}/zoott_workers/made`).catch(() => [])).length === 1
          ? true
          : undefined,
      );
    } finally {
      await bare.close();
    }
  });

  it('a user world cannot take an internal world name, and an x-races world does not disturb x', async () => {
    const bad = startBin([
      '--connect',
      ns,
      '--world',
      'alpha~races',
      '--allow-exec',
      '/bin/true',
      '--run-as',
      SELF,
    ]);
    expect((await bad.exited).code).toBe(2);
    expect(bad.output()).toMatch(/marks zoott's internal worlds/);
    // The old naming scheme's collision: a user world named like gamma's race world used to
    // be, made first (64 buckets, as `zoott init` makes it). Gamma's worker must not touch it.
    await createEngine(client, { world: 'gamma' }).init();
    await createEngine(client, { world: 'gamma-races' }).init();
    const r = startBin([
      '--connect',
      ns,
      '--world',
      'gamma',
      '--allow-exec',
      '/bin/true',
      '--run-as',
      SELF,
      '--node-id',
      'gamma-1',
    ]);
    await r.seen(/"msg":"worker started"/);
    // Its race loop registered in its internal world, not in the user's gamma-races.
    await until('the race loop to register', async () =>
      (await client.children('/zoott_workers/gamma~races').catch(() => [])).length === 1
        ? true
        : undefined,
    );
    expect(await client.children('/zoott_workers/gamma-races')).toEqual([]);
  });

  it('fails with exit 3 once every host has refused, naming the hosts, long before the timeout', async () => {
    const [a, b] = [await refusedPort(), await refusedPort()];
    const r = startBin(
      ['--connect', `127.0.0.1:${a},127.0.0.1:${b}`, '--allow-exec', '/bin/true', '--run-as', SELF],
      // The connect timeout is the session timeout: long, so only the refusal can end it.
      { ZOOTT_SESSION_TIMEOUT_MS: '30000' },
    );
    const connecting = await r.seen(/"msg":"connecting"/);
    const { code, at } = await r.exited;
    expect(code, r.output()).toBe(3);
    expect(r.output()).toContain(`127.0.0.1:${a} (ECONNREFUSED)`);
    expect(r.output()).toContain(`127.0.0.1:${b} (ECONNREFUSED)`);
    // Half the 30 s timeout: only the refusals end it that soon, even on a loaded machine.
    expect(at - connecting).toBeLessThan(15_000);
  });

  it('takes credentials from --auth-file and ZOOTT_AUTH; a wrong password exits 4', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zoott-auth-'));
    try {
      const authFile = join(dir, 'auth');
      writeFileSync(authFile, '# the worker identity\ndigest:keeper:pa:ss\n', { mode: 0o600 });
      const locked = await connectZk(ns, { auth: [{ scheme: 'digest', auth: 'keeper:pa:ss' }] });
      try {
        // A world only `keeper` may touch.
        await createEngine(locked, { world: 'vault' }).init();
        for (const path of ['/zoott_vault', '/zoott_p/vault', '/zoott_workers/vault'])
          await locked.setAcl(path, [digestAcl('keeper', 'pa:ss', 'cdrwa')]);
      } finally {
        await locked.close();
      }
      const base = [
        '--connect',
        ns,
        '--world',
        'vault',
        '--allow-exec',
        '/bin/true',
        '--run-as',
        SELF,
      ];
      const viaFile = startBin([...base, '--auth-file', authFile, '--node-id', 'v1']);
      await viaFile.seen(/"msg":"worker started"/);
      const viaEnv = startBin([...base, '--node-id', 'v2'], { ZOOTT_AUTH: 'keeper:pa:ss' });
      await viaEnv.seen(/"msg":"worker started"/);
      // Neither command line holds the password.
      for (const r of [viaFile, viaEnv])
        expect(readFileSync(`/proc/${r.child.pid}/cmdline`, 'utf8')).not.toContain('pa:ss');
      const wrong = startBin([...base, '--node-id', 'v3'], { ZOOTT_AUTH: 'keeper:nope' });
      const { code } = await wrong.exited;
      expect(code, wrong.output()).toBe(4);
      expect(wrong.output()).not.toContain('nope');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
