/**
 * The exec allow-list and the race input directory decide on real paths: `..`, symlinks
 * and relative names are resolved before the policy sees a path, and the resolved path is
 * what runs (or is read). First the building blocks with real processes, then the shipped
 * worker binary on a real ZooKeeper.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { validateRegularJob } from '@zoott/core/jobs';
import {
  execPolicy,
  isCanonicalPath,
  readRaceInputDir,
  resolveExecutable,
  runRacer,
  runRegularJob,
  submitJob,
  submitRace,
} from '@zoott/jobs/internal';
import { freshNamespace, settled } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  jobWorkerArgs,
  killWorkers,
  registered,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

let dir: string;
let jobs: string;
let data: string;
let outside: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'zoott-exec-'));
  jobs = join(dir, 'jobs');
  data = join(dir, 'data');
  outside = join(dir, 'outside');
  for (const d of [jobs, data, outside, join(data, 'inputs')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(jobs, 'ok.sh'), '#!/bin/sh\necho "ok $1"\n', { mode: 0o755 });
  // A link inside the allowed directory to a program outside it.
  symlinkSync('/usr/bin/touch', join(jobs, 'touch'));
  // A link inside the allowed directory to another allowed file.
  symlinkSync(join(jobs, 'ok.sh'), join(jobs, 'ok-link'));
  writeFileSync(join(outside, 'secret.txt'), 'the secret\n');
  writeFileSync(join(data, 'inputs', 'a.txt'), 'one\ntwo\n');
  // A link inside the data directory to a directory outside it, and a linked file.
  symlinkSync(outside, join(data, 'escape'));
  symlinkSync(join(outside, 'secret.txt'), join(data, 'inputs', 'z-linked.txt'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** `depth` `..` segments: enough to climb from `jobs` to `/` whatever the temp dir. */
const up = () => '/..'.repeat(jobs.split('/').length);

describe('the exec policy decides on canonical real paths', () => {
  it('never matches a path holding `.` or `..`, whatever the glob', () => {
    const allow = execPolicy(['/opt/*/bin/*', '/opt/jobs/**']);
    expect(allow('/opt/x/bin/tool')).toBe(true);
    expect(allow('/opt/../bin/sh')).toBe(false);
    expect(allow('/opt/jobs/../../usr/bin/id')).toBe(false);
    expect(allow('/opt/jobs/./x')).toBe(false);
    expect(allow('/opt/jobs//x')).toBe(false);
    expect(allow('opt/jobs/x')).toBe(false);
    expect(isCanonicalPath('/')).toBe(true);
    expect(isCanonicalPath('/a/b/')).toBe(false);
  });

  it('refuses entries with `.`, `..` or empty segments, naming the entry', () => {
    expect(() => execPolicy(['/opt/jobs/../bin/*'])).toThrow(
      /allowExec\[0\] "\/opt\/jobs\/..\/bin\/\*": must not hold '.', '..' or empty segments/,
    );
    expect(() => execPolicy(['/bin/ok', '/opt//x'])).toThrow(/allowExec\[1\]/);
  });

  it('resolves entries through links when it is made: /bin/sh allows the file it names', async () => {
    const found = await resolveExecutable('sh', '/', '/bin');
    expect(found.ok).toBe(true);
    if (!found.ok) return;
    expect(found.path).toBe('/bin/sh');
    expect(execPolicy(['/bin/sh'])(found.real)).toBe(true);
    expect(execPolicy(['/bin/*'])(found.real)).toBe(true);
    expect(execPolicy(['/bin/true'])(found.real)).toBe(false);
  });

  it('resolveExecutable returns the real path: links and `..` resolved', async () => {
    const viaDots = await resolveExecutable(`${jobs}${up()}/usr/bin/touch`, '/', '');
    const viaLink = await resolveExecutable(join(jobs, 'touch'), '/', '');
    const relative = await resolveExecutable('./jobs/ok-link', dir, '');
    expect(viaDots).toMatchObject({ ok: true, real: '/usr/bin/touch' });
    expect(viaLink).toMatchObject({ ok: true, real: '/usr/bin/touch' });
    expect(relative).toMatchObject({ ok: true, real: join(jobs, 'ok.sh') });
  });
});

describe('the job runners run only what the policy allowed, by its real path', () => {
  const opts = () => ({ serverName: 'h', killGraceMs: 500, allowExec: execPolicy([`${jobs}/**`]) });

  it('a `..` path out of the allowed directory is refused, and nothing runs', async () => {
    const marker = join(dir, 'dots-ran');
    const r = await runRegularJob(
      validateRegularJob({ executable: `${jobs}${up()}/usr/bin/touch`, arguments: [marker] }),
      opts(),
    );
    expect(r.pid).toBe(0);
    expect(r).not.toHaveProperty('exit');
    expect(r.error).toMatch(/\/usr\/bin\/touch is not allowed/);
    expect(existsSync(marker)).toBe(false);
  });

  it('a link inside the allowed directory to a program outside it is refused', async () => {
    const marker = join(dir, 'link-ran');
    const r = await runRegularJob(
      validateRegularJob({ executable: join(jobs, 'touch'), arguments: [marker] }),
      opts(),
    );
    expect(r.pid).toBe(0);
    expect(r).not.toHaveProperty('exit');
    expect(existsSync(marker)).toBe(false);
    const racer = runRacer(join(jobs, 'touch'), [marker], '', opts());
    expect((await racer.done).error).toMatch(/\/usr\/bin\/touch is not allowed/);
    expect(existsSync(marker)).toBe(false);
  });

  it('a link to an allowed file runs that file', async () => {
    const r = await runRegularJob(
      validateRegularJob({ executable: join(jobs, 'ok-link'), arguments: ['x'] }),
      opts(),
    );
    expect(r).toMatchObject({ exit: 0, stdout: 'ok x\n' });
  });
});

describe('race input directories stay inside the data directory by real path', () => {
  it('reads a directory inside, skipping a linked file that points outside', async () => {
    const inputs = await readRaceInputDir(data, 'inputs');
    expect(inputs).toEqual([
      { data: 'one\n', filename: 'inputs/a.txt' },
      { data: 'two\n', filename: 'inputs/a.txt' },
    ]);
  });

  it('refuses a directory reached through a link out of the data directory', async () => {
    await expect(readRaceInputDir(data, 'escape')).rejects.toMatchObject({
      code: 'INVALID_JOB',
      message: expect.stringMatching(/input: "escape" resolves to .*outside, outside the data/),
    });
  });

  it('refuses a data directory that is itself reached through a link only by what it holds', async () => {
    // The data directory named through a link is fine: its real path is the root.
    const linkedData = join(dir, 'data-link');
    symlinkSync(data, linkedData);
    expect(await readRaceInputDir(linkedData, 'inputs')).toHaveLength(2);
    await expect(readRaceInputDir(linkedData, 'escape')).rejects.toMatchObject({
      code: 'INVALID_JOB',
    });
  });
});

describe('the zoott-worker binary on ZooKeeper', { timeout: 120_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let worker: WorkerProcess | undefined;
  const world = 'exec';

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    await createEngine(client, { world }).init();
    const w = startWorker([
      ...jobWorkerArgs(ns, world, 'exec-1', `${jobs}/**`),
      ...['--data-dir', data, '--work-dir', dir],
    ]);
    worker = w;
    await registered(client, world, 1, w);
  });
  afterAll(async () => {
    if (worker) await killWorkers([worker]);
    await client?.close();
  });

  it('`--allow-exec DIR/**` refuses DIR/../../usr/bin/touch: failed at once, nothing ran', async () => {
    const marker = join(dir, 'zk-dots-ran');
    const { key } = await submitJob(
      client,
      { executable: `${jobs}${up()}/usr/bin/touch`, arguments: [marker] },
      { world },
    );
    const rec = await settled(client, world, key);
    expect(rec.state, worker?.output()).toBe('failed');
    expect(rec.attempts).toBe(1);
    expect(rec.error?.message).toMatch(/→ \/usr\/bin\/touch\) is not allowed .*--allow-exec/);
    expect(existsSync(marker)).toBe(false);
  });

  it('a link in the allowed directory to a program outside it is refused', async () => {
    const marker = join(dir, 'zk-link-ran');
    const { key } = await submitJob(
      client,
      { executable: './jobs/touch', arguments: [marker] },
      { world },
    );
    const rec = await settled(client, world, key);
    expect(rec.state).toBe('failed');
    expect(rec.error?.message).toMatch(/jobs\/touch → \/usr\/bin\/touch\) is not allowed/);
    expect(existsSync(marker)).toBe(false);
  });

  it('an allowed script runs, also through a link to it', async () => {
    const { key } = await submitJob(
      client,
      { executable: join(jobs, 'ok-link'), arguments: ['linked'] },
      { world },
    );
    const rec = await settled(client, world, key);
    expect(rec.state).toBe('completed');
    expect(rec.result).toMatchObject({ exit: 0, stdout: 'ok linked\n' });
  });

  it('a race whose input directory leads out of --data-dir through a link fails, unread', async () => {
    const { key, world: raceWorld } = await submitRace(
      client,
      { executable: join(jobs, 'ok.sh'), input: 'escape' },
      { world },
    );
    const rec = await settled(client, raceWorld, key);
    expect(rec.state).toBe('failed');
    expect(rec.error?.message).toMatch(/input: "escape" resolves to .*outside the data directory/);
    // No racer was queued, so nothing read the file outside.
    expect(
      (await createEngine(client, { world }).list()).map((t) => t.key[t.key.length - 1]),
    ).not.toContain(`${key[0]}.0`);
  });
});
