import { type Coordinator, createEngine, digestAcl } from '@zoott/core';
import { encodeJson } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  dropParked,
  ensureReplyDir,
  listParked,
  parkOps,
  publishResult,
  readParkedArea,
  replyDir,
  retryParked,
  worldAcl,
} from '../src/internal.js';

const WORLD = 'pk';
const DIR = replyDir({ exchange: 'zoott~amqp', routingkey: WORLD }, WORLD);

describeOnBackends('parked results: parked in one multi, listed, retried, dropped', (backend) => {
  /** A world with one result in the bridge's reply directory, parked. */
  async function parkedOne(c: Coordinator, n: number): Promise<string> {
    const path = await publishResult(
      c,
      { exchange: 'zoott~amqp', routingkey: WORLD },
      { n, stdout: 'x' },
      { world: WORLD },
    );
    const { stat } = await c.get(path);
    const acl = await worldAcl(c, WORLD);
    const ops = await parkOps(
      c,
      WORLD,
      acl,
      path,
      stat.version,
      { n, stdout: 'x' },
      {
        from: DIR,
        exchange: 'results',
        routingkey: `rk-${n}`,
        reason: 'unroutable',
        attempts: 3,
        firstFailedAt: '2025-01-01T00:00:00.000Z',
      },
    );
    await c.multi(ops);
    return path.slice(path.lastIndexOf('/') + 1);
  }

  async function world(): Promise<Coordinator> {
    const c = await backend().connect();
    await createEngine(c, { world: WORLD, buckets: 2 }).init();
    return c;
  }

  it('a parked result leaves the reply directory and is listed with why and where it was to go', async () => {
    const c = await world();
    expect(await listParked(c, WORLD)).toEqual([]);
    const name = await parkedOne(c, 1);
    expect(await c.children(DIR)).toEqual([]);
    const [p] = await listParked(c, WORLD);
    expect(p).toMatchObject({
      name,
      path: `/zoott_~parked/${WORLD}/${name}`,
      from: DIR,
      exchange: 'results',
      routingkey: 'rk-1',
      reason: 'unroutable',
      attempts: 3,
      result: { n: 1, stdout: 'x' },
    });
    expect(Date.parse(p!.parkedAt)).not.toBeNaN();
  });

  it('results parked in the same millisecond are listed in the order the server made them', async () => {
    const c = await world();
    const root = `/zoott_~parked/${WORLD}`;
    const parkedAt = '2030-01-01T00:00:00.000Z';
    // Protected creates' names: the random marker sorts against the sequence here.
    const names = ['result-_pffffffffffff_0000000001', 'result-_p000000000000_0000000002'];
    for (const [i, name] of names.entries())
      await c.create(
        `${root}/${name}`,
        encodeJson({
          from: DIR,
          exchange: '',
          routingkey: `rk-${i}`,
          reason: 'r',
          attempts: 1,
          firstFailedAt: parkedAt,
          parkedAt,
          result: i,
        }),
        { acl: await worldAcl(c, WORLD) },
      );
    expect((await listParked(c, WORLD)).map((p) => p.name)).toEqual(names);
  });

  it('retry puts it back into its reply directory as a new result, in one multi; drop removes it', async () => {
    const c = await world();
    const a = await parkedOne(c, 1);
    const b = await parkedOne(c, 2);
    const back = await retryParked(c, WORLD, a);
    expect(back.startsWith(`${DIR}/result-`)).toBe(true);
    expect(JSON.parse(Buffer.from((await c.get(back)).data).toString())).toEqual({
      n: 1,
      stdout: 'x',
    });
    expect((await listParked(c, WORLD)).map((p) => p.name)).toEqual([b]);
    await dropParked(c, WORLD, b);
    expect(await listParked(c, WORLD)).toEqual([]);
    await expect(dropParked(c, WORLD, b)).rejects.toMatchObject({ code: 'NO_NODE' });
    await expect(retryParked(c, WORLD, 'result-0000000099')).rejects.toMatchObject({
      code: 'NO_NODE',
      message: expect.stringMatching(/no parked result result-0000000099 in world pk/),
    });
  });

  it("only nodes under the world ACL holding a parked result are listed; one naming a path outside its world's reply area is never retried there", async () => {
    const c = await world();
    await parkedOne(c, 1);
    const root = `/zoott_~parked/${WORLD}`;
    // Planted with another ACL: not the bridge's, not listed.
    await c.create(
      `${root}/planted`,
      encodeJson({ from: DIR, exchange: '', routingkey: 'x', reason: 'r', result: 1 }),
      {
        acl: [digestAcl('someone', 'else', 'cdrwa'), { scheme: 'world', id: 'anyone', perms: 1 }],
      },
    );
    await c.create(`${root}/junk`, encodeJson({ not: 'parked' }), {
      acl: await worldAcl(c, WORLD),
    });
    expect((await listParked(c, WORLD)).map((p) => p.routingkey)).toEqual(['rk-1']);
    await c.create(`${root}/garbled`, Buffer.from('{'), { acl: await worldAcl(c, WORLD) });
    const area = await readParkedArea(c, WORLD);
    expect(area.parked.map((p) => p.routingkey)).toEqual(['rk-1']);
    expect(area.unread).toEqual([
      { name: 'garbled', path: `${root}/garbled`, why: 'not JSON' },
      { name: 'junk', path: `${root}/junk`, why: 'not a parked result' },
      { name: 'planted', path: `${root}/planted`, why: 'not under the world ACL' },
    ]);
    await c.delete(`${root}/garbled`);
    await c.create(
      `${root}/elsewhere`,
      encodeJson({
        from: '/zoott_x/victim',
        exchange: '',
        routingkey: 'x',
        reason: 'r',
        attempts: 1,
        firstFailedAt: '',
        parkedAt: '2030-01-01T00:00:00.000Z',
        result: 1,
      }),
      { acl: await worldAcl(c, WORLD) },
    );
    await expect(retryParked(c, WORLD, 'elsewhere')).rejects.toMatchObject({ code: 'NO_AUTH' });
    expect(await c.exists('/zoott_x')).toBeNull();
    // Another world's reply path: a retry would publish into that world's results.
    const theirs = replyDir({ exchange: 'zoott~amqp', routingkey: 'other' }, 'other');
    await createEngine(c, { world: 'other', buckets: 2 }).init();
    // It exists, under the same credentials' ACL: only the check of the world stops a retry.
    await ensureReplyDir(
      c,
      { exchange: 'zoott~amqp', routingkey: 'other' },
      'other',
      await worldAcl(c, 'other'),
    );
    await c.create(
      `${root}/other-world`,
      encodeJson({
        from: theirs,
        exchange: '',
        routingkey: 'x',
        reason: 'r',
        attempts: 1,
        firstFailedAt: '',
        parkedAt: '2030-01-01T00:00:00.000Z',
        result: 1,
      }),
      { acl: await worldAcl(c, WORLD) },
    );
    await expect(retryParked(c, WORLD, 'other-world')).rejects.toMatchObject({
      code: 'NO_AUTH',
      message: expect.stringMatching(/not a reply path of world pk/),
    });
    expect(await c.children(theirs)).toEqual([]);
  });
});
