import { ENVELOPE, forwarderPaths } from '@zoott/amqp-bridge';
import { createEngine } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, type Program, resultInbox, YOTHALOT_TIME } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

describe('zoott-amqp-bridge: jobs in and results out over a real RabbitMQ', {
  timeout: 180_000,
}, () => {
  let w: TestWorld;
  let bridge: Program;

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'));
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    bridge = await w.bridge();
  });
  afterAll(async () => {
    await w?.close();
  });

  it('a regular job runs and its result reaches the named exchange and routing key in the spec format', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-regular');
    await w.client.post('jobs', {
      executable: '/usr/bin/tr',
      arguments: ['a-z', 'A-Z'],
      stdin: 'hello',
      exchange: 'results',
      routingkey: 'rk-regular',
      ticket: 7,
      tags: { from: 'php' },
    });
    const msg = await inbox.next();
    expect(msg.properties.contentType).toBe('application/json');
    const r = JSON.parse(msg.content.toString()) as Record<string, unknown>;
    expect(r).toMatchObject({
      executable: '/usr/bin/tr',
      arguments: ['a-z', 'A-Z'],
      stdin: 'hello',
      stdout: 'HELLO',
      stderr: '',
      exit: 0,
      exchange: 'results',
      routingkey: 'rk-regular',
      ticket: 7,
      tags: { from: 'php' },
    });
    expect(r).not.toHaveProperty('signal');
    expect(r).not.toHaveProperty('truncated');
    expect(r).not.toHaveProperty('zoott~amqp');
    expect(r.pid).toBeGreaterThan(0);
    expect(typeof r.server).toBe('string');
    expect(r.started).toMatch(YOTHALOT_TIME);
    expect(r.finished).toMatch(YOTHALOT_TIME);
  });

  it('signal only when killed, truncated when output was cut, the default exchange by queue name', async () => {
    // The spec's own pattern: a temporary queue named as the routing key, no exchange.
    const inbox = await resultInbox(w.client.ch, '', null);
    await w.client.post('jobs', {
      executable: '/usr/bin/sh',
      arguments: ['-c', 'kill -9 $$'],
      routingkey: inbox.queue,
      n: 1,
    });
    await w.client.post('jobs', {
      executable: '/usr/bin/seq',
      arguments: ['1', '5000'],
      routingkey: inbox.queue,
      n: 2,
    });
    const results = [await inbox.next(), await inbox.next()]
      .map((m) => JSON.parse(m.content.toString()) as Record<string, unknown>)
      .sort((a, b) => (a.n as number) - (b.n as number));
    const [killed, long] = results as [Record<string, unknown>, Record<string, unknown>];
    expect(killed.signal).toBe(9);
    expect(killed).not.toHaveProperty('exit');
    expect(killed.routingkey).toBe(inbox.queue);
    expect(killed).not.toHaveProperty('exchange');
    expect(long.exit).toBe(0);
    expect(long.truncated).toBe(true);
    expect(String(long.stdout).startsWith('1\n2\n3\n')).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(long))).toBeLessThanOrEqual(4096);
  });

  it('a race job runs and its result arrives in the spec format; the matching input wins a grep race', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-race');
    await w.client.post('races', {
      executable: '/usr/bin/grep',
      arguments: ['needle'],
      input: [
        { data: 'hay\n' },
        { data: 'more hay\n' },
        { data: 'a needle here\n' },
        { data: 'hay again\n' },
      ],
      exchange: 'results',
      routingkey: 'rk-race',
      search: 'logs-2015-11-01',
    });
    const r = JSON.parse((await inbox.next()).content.toString()) as Record<string, unknown>;
    expect(r).toMatchObject({
      executable: '/usr/bin/grep',
      arguments: ['needle'],
      exchange: 'results',
      routingkey: 'rk-race',
      search: 'logs-2015-11-01',
    });
    expect(r).not.toHaveProperty('input');
    expect(r.started).toMatch(YOTHALOT_TIME);
    expect(r.finished).toMatch(YOTHALOT_TIME);
    expect(r.processes).toBeGreaterThanOrEqual(1);
    const winner = r.winner as Record<string, unknown>;
    // grep's exit 1 (no match, silent) is a normal end: those racers do not win.
    expect(winner).toMatchObject({ stdin: 'a needle here\n', stdout: 'a needle here\n', exit: 0 });
    expect(winner).not.toHaveProperty('signal');
    expect(winner.started).toMatch(YOTHALOT_TIME);
    expect(winner.finished).toMatch(YOTHALOT_TIME);
  });

  it('a job without a routing key runs and publishes nothing', async () => {
    const zk = await connectZk(w.connect);
    try {
      const body = JSON.stringify({ executable: '/usr/bin/true', quiet: 'yes' });
      await w.client.post('jobs', body, { messageId: 'quiet-1' });
      const queued = await bridge.logLine(
        (l) => l.msg === 'job from AMQP queued' && l.messageId === 'quiet-1',
        'the quiet job queued',
      );
      const name = String(queued.task);
      const engine = createEngine(zk, { world: w.world });
      const record = await until(async () => {
        const t = await engine.task([name]);
        return t?.state === 'completed' ? t : undefined;
      });
      expect(record.state).toBe('completed');
      // Queued without a reply address, so the worker published its result nowhere.
      const result = record.result as Record<string, unknown>;
      expect(result).toMatchObject({ executable: '/usr/bin/true', quiet: 'yes', exit: 0 });
      expect(result).not.toHaveProperty('routingkey');
      expect(result).not.toHaveProperty(ENVELOPE);
      expect(await zk.children(forwarderPaths(w.world).dir)).toEqual([]);
    } finally {
      await zk.close();
    }
  });

  it('two bridges at once: every job runs once and every result arrives once', async () => {
    await w.bridge(); // a second bridge on the same queues and world
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-two');
    const n = 10;
    for (let i = 0; i < n; i++)
      await w.client.post('jobs', {
        executable: '/usr/bin/echo',
        arguments: [`job ${i}`],
        exchange: 'results',
        routingkey: 'rk-two',
        i,
      });
    const got: number[] = [];
    for (let i = 0; i < n; i++)
      got.push((JSON.parse((await inbox.next()).content.toString()) as { i: number }).i);
    expect(got.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    // Every result left ZooKeeper after its confirm; then a marker sent down the same route
    // arrives after anything routed before it, so nothing more is on its way.
    const zk = await connectZk(w.connect);
    try {
      await until(async () =>
        (await zk.children(forwarderPaths(w.world).dir)).length === 0 ? true : undefined,
      );
    } finally {
      await zk.close();
    }
    w.client.ch.publish('results', 'rk-two', Buffer.from('"marker"'));
    expect((await inbox.next()).content.toString()).toBe('"marker"');
    expect(inbox.pending()).toBe(0);
  });

  it('malformed messages go to the dead-letter exchange with the reason; the bridge keeps running', async () => {
    await w.client.ch.assertExchange('dlx', 'fanout', { durable: false });
    const dead = await resultInbox(w.client.ch, 'dlx', '');
    const results = await resultInbox(w.client.ch, 'results', 'rk-after-dlx');
    await w.bridge({}, [
      '--job-queue',
      'jobs-dlx',
      '--race-queue',
      'races-dlx',
      '--dead-letter-exchange',
      'dlx',
    ]);
    await w.client.post('jobs-dlx', 'this is not JSON', { messageId: 'bad-1' });
    await w.client.post('jobs-dlx', { arguments: ['x'] }, { messageId: 'bad-2' });
    await w.client.post(
      'races-dlx',
      { executable: '/usr/bin/grep', input: 5 },
      { messageId: 'bad-3' },
    );
    const got = [await dead.next(), await dead.next(), await dead.next()].sort((a, b) =>
      String(a.properties.messageId).localeCompare(String(b.properties.messageId)),
    );
    const reasons = got.map((m) => String(m.properties.headers?.['x-zoott-error']));
    expect(reasons[0]).toMatch(/not valid JSON/);
    expect(reasons[1]).toMatch(/executable/);
    expect(reasons[2]).toMatch(/input: must be an array/);
    expect(got.map((m) => m.properties.headers?.['x-zoott-queue'])).toEqual([
      'jobs-dlx',
      'jobs-dlx',
      'races-dlx',
    ]);
    expect(got[0]!.content.toString()).toBe('this is not JSON');
    // Still running: the next job goes through.
    await w.client.post('jobs-dlx', {
      executable: '/usr/bin/echo',
      arguments: ['still here'],
      exchange: 'results',
      routingkey: 'rk-after-dlx',
    });
    const ok = JSON.parse((await results.next()).content.toString()) as { stdout: string };
    expect(ok.stdout).toBe('still here\n');
    expect((await w.client.ch.checkQueue('jobs-dlx')).messageCount).toBe(0);
  });

  it("without a dead-letter exchange setting a malformed message is rejected, to the queue's own one", async () => {
    await w.client.ch.assertExchange('native-dlx', 'fanout', { durable: false });
    const dead = await resultInbox(w.client.ch, 'native-dlx', '');
    for (const q of ['jobs-native', 'races-native'])
      await w.client.ch.assertQueue(q, { durable: true, deadLetterExchange: 'native-dlx' });
    const bridge = await w.bridge({}, [
      '--job-queue',
      'jobs-native',
      '--race-queue',
      'races-native',
      '--declare-queues',
      'false',
    ]);
    await w.client.post('jobs-native', '{"executable": 5}');
    const msg = await dead.next();
    expect(msg.content.toString()).toBe('{"executable": 5}');
    const line = await bridge.logLine((l) => l.msg === 'malformed job message', 'the log line');
    expect(line.reason).toMatch(/executable/);
    expect(line.deadLetterExchange).toBeNull();
  });
});

/** Polls until `probe` returns a value (a condition with a deadline, never a fixed sleep). */
async function until<T>(probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`condition not met within ${ms} ms`);
}
