import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  assertBuilt,
  bodyOf,
  kill,
  queueCounts,
  type ResultInbox,
  resultInbox,
  until,
  YOTHALOT_TIME,
} from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/**
 * Messages that real queues carry besides good jobs, each of which used to stall a queue (a
 * prefetch's worth of them, redelivered forever, held the valid job behind them) or leave its
 * consumer waiting: every one now ends queued, answered with an error result, or dead-lettered.
 */
describe('zoott-amqp-bridge: no message stalls a queue', { timeout: 240_000 }, () => {
  let w: TestWorld;
  let dead: ResultInbox;
  let scratch: string;
  const ctl = (args: string[]) => w.broker.rabbitmqctl(args);

  beforeAll(async () => {
    assertBuilt();
    // Its own broker: rabbitmqctl reads what is left unacknowledged.
    w = await testWorld(inject('zkConnect'), { own: true });
    scratch = mkdtempSync(join(tmpdir(), 'zoott-amqp-poison-'));
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    await w.client.ch.assertExchange('dlx', 'fanout', { durable: false });
    dead = await resultInbox(w.client.ch, 'dlx', '');
    await w.bridge({}, ['--dead-letter-exchange', 'dlx']);
  });
  afterAll(async () => {
    await w?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Every message of `queue` settled: none ready, none held unacknowledged. */
  const drained = (queue: string) =>
    until(async () => {
      const c = await queueCounts(ctl, queue);
      return c.ready === 0 && c.unacked === 0 ? c : undefined;
    });

  /** An error result as the README documents it: the spec's fields, no exit or signal. */
  const expectErrorResult = (r: Record<string, unknown>, error: RegExp) => {
    expect(r.error).toMatch(error);
    expect(r).not.toHaveProperty('exit');
    expect(r).not.toHaveProperty('signal');
    expect(r).toMatchObject({ stdout: '', stderr: '', stdin: '', pid: 0 });
    expect(typeof r.server).toBe('string');
    expect(r.started).toMatch(YOTHALOT_TIME);
    expect(r.finished).toMatch(YOTHALOT_TIME);
  };

  it('jobs the engine refuses (an empty server hint, stdin over 512 KiB) get an error result each; the valid job behind twenty of them runs', async () => {
    const poison = await resultInbox(w.client.ch, 'results', 'rk-poison');
    const valid = await resultInbox(w.client.ch, 'results', 'rk-valid');
    const address = { exchange: 'results', routingkey: 'rk-poison' };
    // More than the prefetch (16): held unacknowledged, they stopped the queue.
    for (let n = 0; n < 10; n++)
      await w.client.post('jobs', { executable: '/usr/bin/true', server: '', ...address, n });
    const big = 'x'.repeat(513 * 1024);
    for (let n = 10; n < 20; n++)
      await w.client.post('jobs', { executable: '/usr/bin/true', stdin: big, ...address, n });
    await w.client.post('jobs', {
      executable: '/usr/bin/echo',
      arguments: ['behind the poison'],
      exchange: 'results',
      routingkey: 'rk-valid',
    });
    expect(bodyOf(await valid.next()).stdout).toBe('behind the poison\n');
    const errors: Record<string, unknown>[] = [];
    for (let i = 0; i < 20; i++) errors.push(bodyOf(await poison.next()));
    errors.sort((a, b) => (a.n as number) - (b.n as number));
    expect(errors.map((e) => e.n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const e of errors.slice(0, 10)) {
      expectErrorResult(e, /server/);
      expect(e).toMatchObject({ executable: '/usr/bin/true', arguments: [], ...address });
    }
    for (const e of errors.slice(10)) expectErrorResult(e, /524288/);
    await drained('jobs');
    expect(dead.pending()).toBe(0);
  });

  it('a job the engine refuses that names no routing key is dead-lettered, with the reason', async () => {
    await w.client.post('jobs', { executable: '/usr/bin/true', server: '' }, { messageId: 'nork' });
    const m = await dead.next();
    expect(m.properties.messageId).toBe('nork');
    expect(String(m.properties.headers?.['x-zoott-error'])).toMatch(/server/);
    await drained('jobs');
  });

  it('a malformed message whose address can be read gets an error result: the spec race example with its "datga" typo', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-datga');
    await w.client.post('races', {
      executable: '/usr/bin/grep',
      arguments: ['needle'],
      input: [
        { data: 'input data for process 1', server: 'server1', filename: 'file1' },
        { datga: 'input data for process 2', server: 'server2', filename: 'file2' },
      ],
      exchange: 'results',
      routingkey: 'rk-datga',
    });
    const r = bodyOf(await inbox.next());
    expect(r.error).toMatch(/datga/);
    expect(r).toMatchObject({
      executable: '/usr/bin/grep',
      arguments: ['needle'],
      winner: null,
      processes: 0,
      exchange: 'results',
      routingkey: 'rk-datga',
    });
    expect(r).not.toHaveProperty('input');
    expect(r.started).toMatch(YOTHALOT_TIME);
    // A regular job with a wrong type, its address readable: answered the same way.
    await w.client.post('jobs', { executable: 5, exchange: 'results', routingkey: 'rk-datga' });
    expectErrorResult(bodyOf(await inbox.next()), /executable/);
    await drained('races');
    await drained('jobs');
    expect(dead.pending()).toBe(0);
  });

  it('an error result no queue takes sends its message to the dead-letter exchange instead, saying so', async () => {
    await w.client.post(
      'jobs',
      { executable: 5, routingkey: 'no-queue-has-this-name' },
      { messageId: 'unanswerable' },
    );
    const m = await dead.next();
    expect(m.properties.messageId).toBe('unanswerable');
    expect(String(m.properties.headers?.['x-zoott-error'])).toMatch(
      /executable.*; its error result could not be published: unroutable/,
    );
    await drained('jobs');
  });

  it("a dead-letter exchange the broker refuses leaves the rejection: the queue's own one gets the message", async () => {
    await w.client.ch.assertExchange('own-dlx', 'fanout', { durable: false });
    const own = await resultInbox(w.client.ch, 'own-dlx', '');
    for (const q of ['jobs-own', 'races-own'])
      await w.client.ch.assertQueue(q, { durable: true, deadLetterExchange: 'own-dlx' });
    const bridge = await w.bridge({}, [
      ...['--job-queue', 'jobs-own', '--race-queue', 'races-own', '--declare-queues', 'false'],
      ...['--dead-letter-exchange', 'no-such-dlx'],
    ]);
    await w.client.post('jobs-own', 'still not JSON', { messageId: 'own-1' });
    const m = await own.next();
    expect(m.properties.messageId).toBe('own-1');
    const line = await bridge.logLine(
      (l) => l.msg === 'message refused' && l.queue === 'jobs-own',
      'the refusal',
    );
    expect(line.outcome).toBe('rejected');
    expect(line.reason).toMatch(/the dead-letter exchange refused it: .*NOT_FOUND/);
    await drained('jobs-own');
    await kill(bridge);
  });

  it('without --dead-letter-exchange, twenty malformed messages are rejected and the valid job behind them runs', async () => {
    const valid = await resultInbox(w.client.ch, 'results', 'rk-nodlx');
    const bridge = await w.bridge({}, ['--job-queue', 'jobs-nodlx', '--race-queue', 'races-nodlx']);
    for (let i = 0; i < 20; i++) await w.client.post('jobs-nodlx', `not JSON ${i}`);
    await w.client.post('jobs-nodlx', {
      executable: '/usr/bin/echo',
      arguments: ['after twenty'],
      exchange: 'results',
      routingkey: 'rk-nodlx',
    });
    expect(bodyOf(await valid.next()).stdout).toBe('after twenty\n');
    await drained('jobs-nodlx');
    const line = await bridge.logLine(
      (l) => l.msg === 'message refused' && l.queue === 'jobs-nodlx' && l.outcome === 'rejected',
      'the rejection',
    );
    expect(line.reason).toMatch(/not valid JSON/);
    await kill(bridge);
  });

  it('a message delivered more than --max-deliveries times is refused (a classic queue: the bridge counts)', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-count');
    const marker = join(scratch, 'count-ran');
    const args = [
      '--job-queue',
      'jobs-count',
      '--race-queue',
      'races-count',
      '--max-deliveries',
      '2',
    ];
    await w.client.ch.assertQueue('jobs-count', { durable: true });
    await w.client.post('jobs-count', {
      executable: '/usr/bin/touch',
      arguments: [marker],
      exchange: 'results',
      routingkey: 'rk-count',
    });
    // Two deliveries, each cut short by a bridge that dies with the message in hand.
    for (let i = 0; i < 2; i++) {
      const b = await w.bridge({ ZOOTT_AMQP_BRIDGE_TEST_PAUSE: 'received' }, args);
      await b.logLine((l) => l.msg === 'test pause', 'the message in hand');
      await kill(b);
    }
    const third = await w.bridge({}, args);
    const r = bodyOf(await inbox.next());
    expectErrorResult(r, /delivered 3 times/);
    await third.logLine((l) => l.msg === 'message refused', 'the refusal');
    await drained('jobs-count');
    expect(existsSync(marker)).toBe(false);
    await kill(third);
  });

  it('a message delivered more than --max-deliveries times is refused (a quorum queue: x-delivery-count)', async () => {
    for (const q of ['jobs-qq', 'races-qq'])
      await w.client.ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const marker = join(scratch, 'qq-ran');
    await w.client.post(
      'jobs-qq',
      { executable: '/usr/bin/touch', arguments: [marker] },
      { messageId: 'qq-1' },
    );
    // Three deliveries returned to the queue: the broker counts them in x-delivery-count.
    for (let i = 0; i < 3; i++) {
      const m = await until(async () => (await w.client.ch.get('jobs-qq')) || undefined);
      w.client.ch.nack(m, false, true);
    }
    const bridge = await w.bridge({}, [
      ...['--job-queue', 'jobs-qq', '--race-queue', 'races-qq', '--declare-queues', 'false'],
      ...['--max-deliveries', '3', '--dead-letter-exchange', 'dlx'],
    ]);
    const m = await dead.next();
    expect(m.properties.messageId).toBe('qq-1');
    expect(String(m.properties.headers?.['x-zoott-error'])).toMatch(/delivered 4 times/);
    await drained('jobs-qq');
    expect(existsSync(marker)).toBe(false);
    await kill(bridge);
  });
});
