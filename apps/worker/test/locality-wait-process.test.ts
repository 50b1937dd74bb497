/**
 * `--locality-wait` by its effect on the shipped binary and a real ZooKeeper, given as a flag,
 * an environment variable and a config-file key (600000 ms), beside a control world whose
 * worker has the default. In each world a live worker named `holder` is busy, and a job is
 * hinted to it (`server: holder`). The tested workers demonstrably see their hinted job
 * (each claims later-queued work from the one bucket behind it) before the control's job is
 * even queued; once the control worker has taken its hinted job at the default wait, the
 * tested workers must still be leaving theirs. A setting that never reached the claimer
 * (the default in its place) would have had the job taken first. When the holder leaves,
 * the job is taken at once: it was left for the holder, not out of reach.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { submitJob } from '@zoott/jobs/internal';
import { freshNamespace, killMarked, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  HELD,
  jobWorkerArgs,
  killWorkers,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

const TESTED = 'near';
const CONTROL = 'near-control';
const ZERO = 'near-zero';
const FORMS = ['flag', 'env', 'file'] as const;

describe('zoott-worker --locality-wait [zookeeper]', { timeout: 300_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let dir: string;
  const workers = new Map<string, WorkerProcess>();

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dir = mkdtempSync(join(tmpdir(), 'zoott-locality-wait-'));
    // One bucket: every worker that claims there lists every job of the world, in order.
    for (const world of [TESTED, CONTROL, ZERO])
      await createEngine(client, { world, buckets: 1 }).init();
  });
  afterAll(async () => {
    await killWorkers(workers.values());
    killMarked(dir);
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (world: string, id: string, args: string[] = [], env = {}) => {
    // No config file is found (none in its working directory): the control has the default.
    const w = startWorker([...jobWorkerArgs(ns, world, id), ...args], { env, cwd: dir });
    workers.set(`${world}/${id}`, w);
    return w;
  };
  const held = (world: string, name: string) =>
    submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', HELD, dir, name] },
      { world, name },
    );
  const running = (name: string) =>
    until(`${name} to start`, () => {
      for (const [id, w] of workers)
        if (w.child.exitCode !== null) throw new Error(`${id} exited:\n${w.output()}`);
      return existsSync(join(dir, `${name}.started`)) ? true : undefined;
    });
  const release = (name: string) => writeFileSync(join(dir, `${name}.go`), '');
  const hinted = (world: string, name: string) =>
    submitJob(
      client,
      { executable: '/bin/sh', arguments: ['-c', 'echo "$0"', name], server: 'holder' },
      { world, name },
    );
  const ranOn = async (world: string, name: string) => {
    const rec = await settled(client, world, [name], 120_000);
    expect(rec.state, `${name}: ${JSON.stringify(rec.error)}`).toBe('completed');
    return rec.worker?.worker;
  };

  it('a job hinted to a live, busy worker is left for the wait, then taken once it leaves', async () => {
    // Each world's holder starts alone and is kept busy by a held job: it cannot take the
    // hinted job, yet its registry node says it is the job's place.
    const holders = [TESTED, CONTROL].map((world) => ({
      world,
      name: `${world}-busy`,
      worker: start(world, 'holder'),
    }));
    for (const h of holders) await held(h.world, h.name);
    for (const h of holders) await running(h.name);

    const config = join(dir, 'wait.yaml');
    writeFileSync(config, 'worker:\n  localityWaitMs: 600000\n');
    const forms: Record<(typeof FORMS)[number], [string[], Record<string, string>]> = {
      flag: [['--locality-wait', '600000'], {}],
      env: [[], { ZOOTT_LOCALITY_WAIT_MS: '600000' }],
      file: [['--config', config], {}],
    };
    for (const form of FORMS) start(TESTED, `wait-${form}`, ...forms[form]);
    start(CONTROL, 'wait-control');

    await hinted(TESTED, 'left');
    // Queued behind it in the one bucket: each tested worker claims one, so each has listed
    // and read the hinted job first (and left it).
    const later = FORMS.map((form) => `later-${form}`);
    for (const name of later) await held(TESTED, name);
    for (const name of later) await running(name);
    const engine = createEngine(client, { world: TESTED });
    const claimedBy = await Promise.all(
      later.map(async (name) => (await engine.task([name]))?.worker?.worker),
    );
    expect(claimedBy.sort()).toEqual(FORMS.map((f) => `wait-${f}`).sort());
    for (const name of later) release(name);
    for (const name of later) await ranOn(TESTED, name);

    // Only now: the control's hinted job, first seen after the tested workers saw theirs.
    await hinted(CONTROL, 'taken');
    expect(await ranOn(CONTROL, 'taken')).toBe('wait-control');
    // The tested workers, idle all along, still leave theirs to the holder.
    expect((await engine.task(['left']))?.state).toBe('pending');

    // The holder leaves (stops, then its held job ends): nobody waits for it any more.
    const holder = holders.find((h) => h.world === TESTED)!;
    holder.worker.child.kill('SIGTERM');
    await until('the holder to stop claiming', () =>
      holder.worker.output().includes('"msg":"stopping: no new claims"') ? true : undefined,
    );
    release(holder.name);
    expect(await holder.worker.exited, holder.worker.output()).toEqual({ code: 0, signal: null });
    expect(FORMS.map((f) => `wait-${f}`)).toContain(await ranOn(TESTED, 'left'));
  });

  it('--locality-wait 0 reaches the claimer: a hinted job is taken at once', async () => {
    // Not a race against the default's 2 s: the worker's config file says 600000 ms, and the
    // flag's 0 (which a parser reading 0 as "not given" would drop) must override it, or the
    // job is left to its busy holder for ten minutes.
    // The first test's holder stopped on purpose: only a worker of this test exiting is news.
    for (const [id, w] of workers) if (w.child.exitCode !== null) workers.delete(id);
    start(ZERO, 'holder');
    await held(ZERO, 'zero-busy');
    await running('zero-busy');
    const config = join(dir, 'zero-wait.yaml');
    writeFileSync(config, 'worker:\n  localityWaitMs: 600000\n');
    start(ZERO, 'zero', ['--config', config, '--locality-wait', '0']);
    await hinted(ZERO, 'zero-first');
    expect(await ranOn(ZERO, 'zero-first')).toBe('zero');
    release('zero-busy');
  });
});
