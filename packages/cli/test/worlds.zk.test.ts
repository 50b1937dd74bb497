import { createEngine, runWorker, utf8 } from '@zoott/core';
import { internalWorldName } from '@zoott/core/internal';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { assertBuilt, freshConnect, json, session, until, zoott } from './helpers.js';

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

beforeAll(assertBuilt);

interface Listing {
  connect: string;
  worlds: ({ world: string } & Record<string, unknown>)[];
  corrupt: { path: string; reason: string }[];
}

describe('zoott worlds', { timeout: SLOW }, () => {
  it('says there are none in an empty namespace, in both forms', async () => {
    const connect = await freshConnect();
    const r = await zoott(['--connect', connect, 'worlds']);
    expect(r.code, r.stderr).toBe(ExitCode.OK);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`no worlds at ${connect}`);
    const j = await zoott(['--connect', connect, '--json', 'worlds']);
    expect(j.code, j.stderr).toBe(ExitCode.OK);
    expect(json<Listing>(j)).toEqual({ connect, worlds: [], corrupt: [] });
  });

  it('lists each user world with its buckets, tasks per state and live workers; --json has the same facts', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, ...args]);
    expect((await z(['init', 'beta', '--buckets', '2'])).code).toBe(ExitCode.OK);
    expect((await z(['init', 'alpha', '--buckets', '4'])).code).toBe(ExitCode.OK);
    expect((await z(['-w', 'alpha', 'queue', 'a1', '-t', 'fetch'])).code).toBe(ExitCode.OK);
    expect((await z(['-w', 'alpha', 'queue', 'a2', '-t', 'fetch'])).code).toBe(ExitCode.OK);
    const c = await session(connect);
    // zoott's internal race world of alpha is no world of the user's: not listed.
    await createEngine(c, { world: internalWorldName('alpha', 'races'), buckets: 1 }).init();
    // A live worker of beta that serves no type alpha has: it registers and runs nothing.
    const worker = runWorker(c, { other: () => null }, { world: 'beta', pollMs: 200 });
    try {
      await until(() => worker.registryPath !== null, 'the worker to register');

      const r = await z(['worlds']);
      expect(r.code, r.stderr).toBe(ExitCode.OK);
      expect(r.stdout.split('\n')).toEqual([
        'WORLD  BUCKETS  PENDING  WORKING  COMPLETED  FAILED  WORKERS',
        'alpha  4        2        0        0          0       0',
        'beta   2        0        0        0          0       1',
        '',
      ]);

      const j = await z(['--json', 'worlds']);
      expect(j.code, j.stderr).toBe(ExitCode.OK);
      expect(json<Listing>(j)).toEqual({
        connect,
        worlds: [
          {
            world: 'alpha',
            buckets: 4,
            pending: 2,
            working: 0,
            completed: 0,
            failed: 0,
            workers: 0,
          },
          {
            world: 'beta',
            buckets: 2,
            pending: 0,
            working: 0,
            completed: 0,
            failed: 0,
            workers: 1,
          },
        ],
        corrupt: [],
      });
    } finally {
      await worker.stop();
    }
  });

  it('lists a world it cannot read with the reason, and still exits 0', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, ...args]);
    expect((await z(['init', 'open', '--buckets', '2'])).code).toBe(ExitCode.OK);
    // Locked to alice: without her credentials its meta cannot be read.
    expect((await z(['--auth', 'alice:s3cret', 'init', 'locked', '--buckets', '2'])).code).toBe(
      ExitCode.OK,
    );
    // Meta another client overwrote: reported as a corrupt node as well.
    expect((await z(['init', 'smashed', '--buckets', '2'])).code).toBe(ExitCode.OK);
    await (await session(connect)).set('/zoott_smashed', utf8.encode('{oops'));

    const r = await z(['worlds']);
    expect(r.code, r.stderr).toBe(ExitCode.OK);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^WORLD +BUCKETS .* WORKERS +PROBLEM$/);
    expect(lines[1]).toMatch(/^locked +(- +){6}not authorised for \/zoott_locked/);
    expect(lines[2]).toMatch(/^open +2 +0 +0 +0 +0 +0$/);
    expect(lines[3]).toMatch(/^smashed +(- +){6}node data is not JSON/);
    expect(r.stderr).toMatch(/^corrupt: \/zoott_smashed: node data is not JSON/m);

    const j = await z(['--json', 'worlds']);
    expect(j.code, j.stderr).toBe(ExitCode.OK);
    const listing = json<Listing>(j);
    expect(listing.worlds.map((w) => [w.world, (w.problem as { code?: string })?.code])).toEqual([
      ['locked', 'NO_AUTH'],
      ['open', undefined],
      ['smashed', 'BAD_ARGUMENTS'],
    ]);
    expect(listing.corrupt.map((n) => n.path)).toEqual(['/zoott_smashed']);

    // With the owner's credentials the locked world has its numbers.
    const owner = await z(['--auth', 'alice:s3cret', '--json', 'worlds']);
    expect(owner.code, owner.stderr).toBe(ExitCode.OK);
    expect(json<Listing>(owner).worlds[0]).toEqual({
      world: 'locked',
      buckets: 2,
      pending: 0,
      working: 0,
      completed: 0,
      failed: 0,
      workers: 0,
    });
  });

  it('exits 3 with a hint when nothing listens', async () => {
    const r = await zoott(['--connect', '127.0.0.1:1', '--connect-timeout', '1s', 'worlds']);
    expect(r.code).toBe(ExitCode.UNREACHABLE);
    expect(r.stderr).toMatch(/^hint: /m);
  });
});
