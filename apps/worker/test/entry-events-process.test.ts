/**
 * `--entry-events` by what the shipped binary asks of a real ZooKeeper: the tree watches
 * (persistent recursive watches, ZooKeeper 3.6+) its session holds on the pending buckets,
 * read from the server with the four-letter word `wchc`, for the session that owns the
 * daemon's registry node. wchc lists a session's data watches and persistent watches, never
 * its children watches, and the daemon sets no data watch on a bucket node (with `off` it
 * holds none there while it lists and claims from those buckets), so a bucket path in its
 * list is a tree watch.
 *
 * One daemon per mode, each in a world of two buckets. One bucket holds a task of a type
 * nobody serves and 40 children of it: a listing past twice the lookahead (16), which `small`
 * leaves to a children watch. The race world (`<world>~races`, 8 buckets) is empty. So:
 * - small (the default, unset): the other bucket and every race bucket, not the big one;
 * - all (given by the environment variable): every bucket of both worlds;
 * - children (given by the config file): none, until it claims a job queued together with a
 *   child of it; then both buckets of its world (its race loop claimed no such task);
 * - off (given by the flag): none, even then.
 * The daemons all run the same steps; the negative readings are taken after the positive ones
 * of the others have shown up, and after the daemon itself has run a job: it lists its
 * buckets before it claims, and ZooKeeper applies one session's requests in order, so a tree
 * watch set for that listing would be on the server before the job's completion.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { raceWorld, submitJob } from '@zoott/jobs/internal';
import { freshNamespace, killMarked, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { fourLetter } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  HELD,
  jobWorkerArgs,
  killWorkers,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

const MODES = ['small', 'all', 'children', 'off'] as const;
type Mode = (typeof MODES)[number];
const BUCKETS = 2;
const RACE_BUCKETS = 8;
/** Entries in the big bucket: past `2 × lookahead` (32), where `small` drops its watch. */
const BIG = 41;

const worldOf = (mode: Mode) => `events-${mode}`;

/** The session ids (16 hex digits, as `ephemeralOwner` has them) and the paths each watches. */
async function watchesBySession(server: string): Promise<Map<string, string[]>> {
  const answer = await fourLetter(server, 'wchc');
  const bySession = new Map<string, string[]>();
  let paths: string[] | undefined;
  for (const line of answer.split('\n')) {
    if (line.startsWith('0x')) {
      paths = [];
      bySession.set(BigInt(line.trim()).toString(16).padStart(16, '0'), paths);
    } else if (line.startsWith('\t') && paths) paths.push(line.trim());
    // Anything else is the server refusing (`wchc` off its whitelist, not serving): say so.
    else if (line.trim() !== '') throw new Error(`wchc answered: ${answer}`);
  }
  return bySession;
}

describe('zoott-worker --entry-events [zookeeper]', { timeout: 300_000 }, () => {
  const server = inject('zkConnect');
  let ns: string;
  /** The chroot the worlds are in: the server's paths start with it. */
  let chroot: string;
  let client: Coordinator;
  let dir: string;
  const workers = new Map<Mode, WorkerProcess>();
  const sessions = new Map<Mode, string>();
  /** The bucket holding the big listing, by world. */
  const big = new Map<Mode, string>();

  const bucketPath = (world: string, b: number) =>
    `${chroot}/zoott_p/${world}/${String(b).padStart(4, '0')}`;
  const worldBuckets = (mode: Mode) =>
    Array.from({ length: BUCKETS }, (_, b) => bucketPath(worldOf(mode), b));
  const raceBuckets = (mode: Mode) =>
    Array.from({ length: RACE_BUCKETS }, (_, b) => bucketPath(raceWorld(worldOf(mode)), b));

  /** The pending-bucket paths the daemon's session holds a watch on, now, sorted. */
  const bucketWatches = async (mode: Mode): Promise<string[]> => {
    const held = (await watchesBySession(server)).get(sessions.get(mode)!) ?? [];
    return held.filter((p) => p.startsWith(`${chroot}/zoott_p/`)).sort();
  };
  /** The bucket watches once they are `want`, or, after a deadline, the last seen. */
  const watchesWhen = async (mode: Mode, want: string[]): Promise<string[]> => {
    const sorted = [...want].sort();
    let seen: string[] = [];
    await until(
      `${mode}: watches on ${sorted.join(' ')}`,
      async () => {
        seen = await bucketWatches(mode);
        return seen.join() === sorted.join() ? true : undefined;
      },
      30_000,
    ).catch(() => undefined);
    return seen;
  };

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(server);
    chroot = ns.slice(ns.indexOf('/'));
    client = await connectZk(ns);
    dir = mkdtempSync(join(tmpdir(), 'zoott-entry-events-'));
    for (const mode of MODES) {
      const engine = createEngine(client, { world: worldOf(mode), buckets: BUCKETS });
      await engine.init();
      // A parent and its children share its bucket: one bucket gets all of them.
      const queued = await engine.queueMany([
        { name: 'idle', type: 'nobody.serves' },
        ...Array.from({ length: BIG - 1 }, (_, i) => ({
          name: `idle-${i}`,
          type: 'nobody.serves',
          parent: { key: ['idle'] },
        })),
      ]);
      // The entry's path is the client's, below the chroot.
      const entry = queued[0]!.entry;
      big.set(mode, `${chroot}${entry.slice(0, entry.lastIndexOf('/'))}`);
    }
    const config = join(dir, 'children.yaml');
    writeFileSync(config, 'worker:\n  entryEvents: children\n');
    const given: Record<Mode, [string[], Record<string, string>]> = {
      small: [[], {}],
      all: [[], { ZOOTT_ENTRY_EVENTS: 'all' }],
      children: [['--config', config], {}],
      off: [['--entry-events', 'off'], {}],
    };
    for (const mode of MODES) {
      const [args, env] = given[mode];
      const w = startWorker([...jobWorkerArgs(ns, worldOf(mode), mode), ...args], {
        env,
        cwd: dir,
      });
      workers.set(mode, w);
    }
    for (const mode of MODES) {
      const registry = `/zoott_workers/${worldOf(mode)}`;
      const owner = await until(`${mode} to register`, async () => {
        const w = workers.get(mode)!;
        if (w.child.exitCode !== null) throw new Error(`${mode} exited:\n${w.output()}`);
        const [name] = await client.children(registry).catch(() => []);
        return name === undefined
          ? undefined
          : ((await client.exists(`${registry}/${name}`))?.ephemeralOwner ?? undefined);
      });
      sessions.set(mode, owner);
    }
    // Each daemon lists its buckets and claims: a job of its own, run to completion.
    await Promise.all(
      MODES.map(async (mode) => {
        const { key } = await submitJob(
          client,
          { executable: '/bin/sh', arguments: ['-c', 'echo ran'] },
          { world: worldOf(mode) },
        );
        const rec = await settled(client, worldOf(mode), key);
        expect(rec.state, workers.get(mode)!.output()).toBe('completed');
      }),
    );
  });
  afterAll(async () => {
    await killWorkers(workers.values());
    killMarked(dir);
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the server shows the daemon sessions, with watches of theirs (wchc is readable)', async () => {
    const bySession = await watchesBySession(server);
    for (const mode of MODES) expect(bySession.get(sessions.get(mode)!), mode).toBeDefined();
  });

  it('by default: a tree watch on each small bucket of the world and of its race world', async () => {
    const small = worldBuckets('small').filter((p) => p !== big.get('small'));
    const want = [...small, ...raceBuckets('small')];
    expect(await watchesWhen('small', want)).toEqual(want.sort());
  });

  it('all (ZOOTT_ENTRY_EVENTS): a tree watch on every bucket, the big one too', async () => {
    const want = [...worldBuckets('all'), ...raceBuckets('all')];
    expect(await watchesWhen('all', want)).toEqual(want.sort());
  });

  it('children (config file) and off (flag): none, while the others hold theirs', async () => {
    // The same steps brought the default and `all` to their watches (the tests above).
    expect(await bucketWatches('children')).toEqual([]);
    expect(await bucketWatches('off')).toEqual([]);
  });

  it('children: every bucket of the world once it claims a job whose child is queued; off: none', async () => {
    for (const mode of ['children', 'off'] as const) {
      const name = `parent-${mode}`;
      // In one transaction: the listing that shows the parent shows its child too.
      await createEngine(client, { world: worldOf(mode) }).queueMany([
        {
          name,
          type: 'zoott.job',
          data: { executable: '/bin/sh', arguments: ['-c', HELD, dir, name] },
        },
        {
          name: 'child',
          type: 'zoott.job',
          data: { executable: '/bin/sh', arguments: ['-c', 'echo child'] },
          parent: { key: [name] },
        },
      ]);
    }
    for (const mode of ['children', 'off'] as const)
      await until(`${mode}'s parent job to run`, () =>
        existsSync(join(dir, `parent-${mode}.started`)) ? true : undefined,
      );
    const want = worldBuckets('children');
    expect(await watchesWhen('children', want)).toEqual(want.sort());
    expect(await bucketWatches('off')).toEqual([]);
    // Let the parents finish, and their children run after them: off still claims as before.
    for (const mode of ['children', 'off'] as const)
      writeFileSync(join(dir, `parent-${mode}.go`), '');
    for (const mode of ['children', 'off'] as const) {
      const rec = await settled(client, worldOf(mode), [`parent-${mode}`, 'child']);
      expect(rec.state, workers.get(mode)!.output()).toBe('completed');
    }
    expect(await bucketWatches('off')).toEqual([]);
  });
});
