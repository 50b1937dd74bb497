import { taskNameOf } from '@zoott/amqp-bridge';
import { createEngine } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, resultInbox, YOTHALOT_TIME } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

describe('zoott-amqp-bridge: jobs in and results out over a real RabbitMQ', {
  timeout: 180_000,
}, () => {
  let w: TestWorld;

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'));
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    await w.bridge();
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
      const name = taskNameOf('regular', Buffer.from(body), 'quiet-1');
      const engine = createEngine(zk, { world: w.world });
      const record = await until(async () => {
        const t = await engine.task([name]);
        return t?.state === 'completed' ? t : undefined;
      });
      expect(record.state).toBe('completed');
      // The bridge's reply directory never got a result for it.
      expect(await zk.exists('/zoott_r/zoott~amqp/jobs')).toBeNull();
    } finally {
      await zk.close();
    }
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
