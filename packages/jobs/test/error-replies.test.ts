import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PermanentError, ZoottError } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createJobEngine,
  JOB_TYPE,
  RACE_TYPE,
  racesRoot,
  readRaceInputDir,
  replyDir,
  waitForResult,
} from '../src/internal.js';

describeOnBackends('a job that fails for good still answers on its reply path', (backend) => {
  /** A job engine on a fresh world with one task of `type` claimed. */
  async function claimed(type: string, data: unknown) {
    const c = await backend().connect();
    const engine = createJobEngine(c, { world: 'er', buckets: 2, logger: { warn() {} } });
    await engine.init();
    await engine.queue({ name: 't', type, data }, null, null, { maxAttempts: 2 });
    const claim = await engine.claim({ worker: 'worker-9' });
    return { c, engine, claim: claim! };
  }

  it('a permanent failure publishes an error result: the job echoed, no exit, error saying why', async () => {
    const job = { executable: '/usr/sbin/nologin', routingkey: 'rk', ticket: 'T-1', stdin: 'in' };
    const { c, engine, claim } = await claimed(JOB_TYPE, job);
    const outcome = await engine.fail(claim, new PermanentError('executable is not allowed'));
    expect(outcome.status).toBe('failed');
    const got = await waitForResult<Record<string, unknown>>(c, {
      world: 'er',
      routingkey: 'rk',
      timeoutMs: 10_000,
    });
    expect(got.result).toMatchObject({
      executable: '/usr/sbin/nologin',
      arguments: [],
      routingkey: 'rk',
      ticket: 'T-1',
      stdin: '',
      stdout: '',
      stderr: '',
      pid: 0,
      server: 'worker-9',
      error: 'executable is not allowed',
    });
    expect(got.result).not.toHaveProperty('exit');
    expect(got.result).not.toHaveProperty('signal');
    expect(got.result.started).toBe(got.result.finished);
    engine.close();
  });

  it('a failure that will be retried publishes nothing yet; the last one answers', async () => {
    const { c, engine, claim } = await claimed(JOB_TYPE, { executable: 'x', routingkey: 'again' });
    expect((await engine.fail(claim, new Error('boom'))).status).toBe('retrying');
    await expect(
      waitForResult(c, { world: 'er', routingkey: 'again', timeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'WAIT_TIMEOUT' });
    engine.close();
  });

  it('a race that fails for good answers with winner null, processes 0 and the error', async () => {
    const race = { executable: 'grep', input: 'gone', exchange: 'ex', routingkey: 'rr', tag: 1 };
    const { c, engine, claim } = await claimed(RACE_TYPE, race);
    await engine.fail(
      claim,
      new ZoottError('INVALID_JOB', 'input: directory "gone" holds no records'),
    );
    const got = await waitForResult<Record<string, unknown>>(c, {
      world: 'er',
      exchange: 'ex',
      routingkey: 'rr',
      timeoutMs: 10_000,
    });
    expect(got.result).toMatchObject({
      executable: 'grep',
      arguments: [],
      exchange: 'ex',
      routingkey: 'rr',
      tag: 1,
      winner: null,
      processes: 0,
      error: 'INVALID_JOB: input: directory "gone" holds no records',
    });
    expect(got.result).not.toHaveProperty('input');
    engine.close();
  });

  it('a job without a routing key fails without publishing anything', async () => {
    const { c, engine, claim } = await claimed(JOB_TYPE, { executable: 'x' });
    await engine.fail(claim, new PermanentError('no'));
    expect(await c.children('/zoott_~replies/er')).toEqual([]);
    engine.close();
  });
});

describe('reply paths that are another reply path are refused', () => {
  it('"_default" is where "" goes; "races" is an exchange like any other (race state has its own area)', () => {
    expect(replyDir({ routingkey: 'rk' }, 'ex')).toBe('/zoott_~replies/ex/_default/rk');
    expect(replyDir({ exchange: '', routingkey: 'rk' }, 'ex')).toBe(
      '/zoott_~replies/ex/_default/rk',
    );
    expect(() => replyDir({ exchange: '_default', routingkey: 'rk' }, 'ex')).toThrow(
      /exchange "_default": is reserved \(it is the reply path of the default exchange/,
    );
    expect(replyDir({ exchange: 'races', routingkey: 'rk' }, 'ex')).toBe(
      '/zoott_~replies/ex/races/rk',
    );
    expect(racesRoot('ex')).toBe('/zoott_~races/ex');
  });
});

describe('a race input directory obeys the racer cap', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'zoott-race-cap-'));
    mkdirSync(join(dir, 'many'));
    for (let i = 0; i < 12; i++) writeFileSync(join(dir, 'many', `f${i}`), `a${i}\nb${i}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('up to the cap every record is a racer; one past it is refused, naming the cap', async () => {
    expect(await readRaceInputDir(dir, 'many', 24)).toHaveLength(24);
    await expect(readRaceInputDir(dir, 'many', 23)).rejects.toMatchObject({
      code: 'INVALID_JOB',
      message: expect.stringMatching(/holds more than the limit of 23 records/),
    });
  });
});
