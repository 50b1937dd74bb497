import { ENVELOPE } from '@zoott/amqp-bridge';
import { createEngine } from '@zoott/core';
import { dropParked, listParked, publishResult } from '@zoott/jobs';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  assertBuilt,
  bodyOf,
  exitsAtStart,
  kill,
  type ResultInbox,
  resultInbox,
  until,
} from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/** Where jobs go in (a world that must exist) and where results may go out (--reply-exchanges). */
describe('zoott-amqp-bridge: the world it serves and the exchanges it publishes to', {
  timeout: 180_000,
}, () => {
  let w: TestWorld;
  let dead: ResultInbox;

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'));
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    await w.client.ch.assertExchange('res.a', 'direct', { durable: false });
    await w.client.ch.assertExchange('other', 'direct', { durable: false });
    await w.client.ch.assertExchange('world-dlx', 'fanout', { durable: false });
    dead = await resultInbox(w.client.ch, 'world-dlx', '');
  });
  afterAll(async () => {
    await w?.close();
  });

  it('a world that does not exist is refused: exit 5, naming the worlds that do; nothing consumed', async () => {
    const queues = ['--job-queue', 'typo-jobs', '--race-queue', 'typo-races'];
    await w.client.ch.assertQueue('typo-jobs', { durable: true });
    await w.client.post('typo-jobs', { executable: '/usr/bin/true' });
    const out = await exitsAtStart(
      queues,
      { ZOOTT_CONNECT: w.connect, ZOOTT_WORLD: 'jbos', ZOOTT_AMQP_URL: w.broker.url },
      5,
    );
    expect(out).toMatch(/world jbos was never initialised; the worlds here are: jobs/);
    expect(out).toMatch(/--create-world/);
    expect((await w.client.ch.checkQueue('typo-jobs')).messageCount).toBe(1);
    const zk = await connectZk(w.connect);
    try {
      expect(await zk.exists('/zoott_jbos')).toBeNull();
    } finally {
      await zk.close();
    }
  });

  it('--create-world creates a missing world and serves it', async () => {
    const bridge = await w.bridge({ ZOOTT_WORLD: 'fresh' }, [
      ...['--create-world', '--job-queue', 'fresh-jobs', '--race-queue', 'fresh-races'],
    ]);
    const zk = await connectZk(w.connect);
    try {
      await createEngine(zk, { world: 'fresh' }).context();
    } finally {
      await zk.close();
    }
    await kill(bridge);
  });

  it('--reply-exchanges confines results: a job naming another exchange is refused and dead-lettered', async () => {
    const bridge = await w.bridge({}, [
      ...['--job-queue', 'rx-jobs', '--race-queue', 'rx-races'],
      ...['--reply-exchanges', 'results,res.*', '--dead-letter-exchange', 'world-dlx'],
    ]);
    const a = await resultInbox(w.client.ch, 'res.a', 'rk-rx');
    const plain = await resultInbox(w.client.ch, 'results', 'rk-rx');
    const other = await resultInbox(w.client.ch, 'other', 'rk-rx');
    const job = (exchange: string | undefined, n: number) => ({
      executable: '/usr/bin/echo',
      arguments: [String(n)],
      ...(exchange === undefined ? {} : { exchange }),
      routingkey: 'rk-rx',
      n,
    });
    await w.client.post('rx-jobs', job('res.a', 1), { messageId: 'rx-1' });
    await w.client.post('rx-jobs', job('results', 2), { messageId: 'rx-2' });
    await w.client.post('rx-jobs', job('other', 3), { messageId: 'rx-3' });
    // The default exchange ("") is not in the list either.
    await w.client.post('rx-jobs', job(undefined, 4), { messageId: 'rx-4' });
    expect(bodyOf(await a.next()).n).toBe(1);
    expect(bodyOf(await plain.next()).n).toBe(2);
    const refused = [await dead.next(), await dead.next()].sort((x, y) =>
      String(x.properties.messageId).localeCompare(String(y.properties.messageId)),
    );
    expect(refused.map((m) => m.properties.messageId)).toEqual(['rx-3', 'rx-4']);
    expect(String(refused[0]!.properties.headers?.['x-zoott-error'])).toMatch(
      /exchange "other" is not one of --reply-exchanges/,
    );
    expect(String(refused[1]!.properties.headers?.['x-zoott-error'])).toMatch(
      /the default exchange \(""\) is not one of --reply-exchanges/,
    );
    expect(other.pending()).toBe(0);
    // A result for an exchange outside the patterns (its job queued before they were set,
    // say) is never published: parked at once.
    const zk = await connectZk(w.connect);
    try {
      await publishResult(
        zk,
        { exchange: 'zoott~amqp', routingkey: w.world },
        {
          executable: '/usr/bin/true',
          stdout: '',
          [ENVELOPE]: { exchange: 'other', routingkey: 'rk-rx' },
        },
        { world: w.world },
      );
      const parked = await until(async () => {
        const p = await listParked(zk, w.world);
        return p.length > 0 ? p : undefined;
      });
      expect(parked[0]).toMatchObject({
        exchange: 'other',
        routingkey: 'rk-rx',
        attempts: 0,
        reason: 'exchange "other" is not one of --reply-exchanges',
      });
      await dropParked(zk, w.world, parked[0]!.name);
    } finally {
      await zk.close();
    }
    expect(other.pending()).toBe(0);
    await kill(bridge);
  });

  it('a routing key over 255 bytes cannot carry a result: the job is refused and dead-lettered', async () => {
    const bridge = await w.bridge({}, [
      ...['--job-queue', 'long-jobs', '--race-queue', 'long-races'],
      ...['--dead-letter-exchange', 'world-dlx'],
    ]);
    await w.client.post(
      'long-jobs',
      { executable: '/usr/bin/true', exchange: 'results', routingkey: 'k'.repeat(256) },
      { messageId: 'long-1' },
    );
    const m = await dead.next();
    expect(m.properties.messageId).toBe('long-1');
    expect(String(m.properties.headers?.['x-zoott-error'])).toMatch(/routingkey.*255 bytes/);
    await kill(bridge);
  });
});
