import { spawnSync } from 'node:child_process';
import amqp from 'amqplib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  amqpAnswers,
  type LocalRabbitMq,
  type RabbitMqBroker,
  RabbitMqUnavailableError,
  startRabbitMq,
} from '../src/index.js';

const started: RabbitMqBroker[] = [];
afterAll(async () => {
  await Promise.all(started.map((b) => b.stop()));
});

/** Whether an epmd answers on this port (`epmd -names` asks it). */
function epmdAnswers(port: number): boolean {
  return spawnSync('epmd', ['-port', String(port), '-names'], { stdio: 'ignore' }).status === 0;
}

describe('rabbitmq-testkit', { timeout: 180_000 }, () => {
  it('starts a private broker: own node name, ports and epmd; it carries messages; stop takes all of it away', async () => {
    const broker = await startRabbitMq({ own: true });
    started.push(broker);
    expect(broker.kind).toBe('local');
    const local = broker as LocalRabbitMq;
    expect(local.nodeName).toMatch(/^zoott-test-\d+-\d+@localhost$/);
    expect(local.port).not.toBe(5672);
    expect(epmdAnswers(local.layout.epmdPort)).toBe(true);

    const conn = await amqp.connect(broker.url);
    const ch = await conn.createChannel();
    const q = await ch.assertQueue('', { exclusive: true });
    ch.sendToQueue(q.queue, Buffer.from('hello'));
    const got = await new Promise<string>((resolve) => {
      void ch.consume(q.queue, (m) => m && resolve(m.content.toString()), { noAck: true });
    });
    expect(got).toBe('hello');
    await conn.close();

    await broker.stop();
    expect(await amqpAnswers('127.0.0.1', broker.port)).toBe(false);
    expect(epmdAnswers(local.layout.epmdPort)).toBe(false);
  });

  it('a broker killed outright starts again on the same port and keeps its durable queues', async () => {
    const broker = await startRabbitMq({ own: true });
    started.push(broker);
    const conn = await amqp.connect(broker.url);
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue('kept', { durable: true });
    ch.sendToQueue('kept', Buffer.from('survives'), { persistent: true });
    await ch.waitForConfirms();
    await conn.close();
    // The message is on disk (confirmed), but RabbitMQ 3.x logs the queue's declaration to
    // Mnesia without waiting for the disk: a SIGKILL right after it may lose the queue
    // itself. Sync that log first, so what is tested is the restart, not that race.
    await broker.rabbitmqctl(['eval', 'mnesia:sync_log().']);
    await broker.stop({ kill: true });
    expect(await amqpAnswers('127.0.0.1', broker.port)).toBe(false);
    await broker.start();
    const again = await amqp.connect(broker.url);
    const ch2 = await again.createChannel();
    const msg = await ch2.get('kept', { noAck: true });
    expect(msg === false ? null : msg.content.toString()).toBe('survives');
    await again.close();
  });

  it('uses ZOOTT_AMQP_URL as is, without starting anything', async () => {
    const saved = process.env.ZOOTT_AMQP_URL;
    process.env.ZOOTT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:1';
    try {
      const broker = await startRabbitMq();
      expect(broker.kind).toBe('external');
      expect(broker.port).toBe(1);
    } finally {
      if (saved === undefined) delete process.env.ZOOTT_AMQP_URL;
      else process.env.ZOOTT_AMQP_URL = saved;
    }
  });

  it('names every way to get a broker when there is none', () => {
    const err = new RabbitMqUnavailableError(['no rabbitmq-server']);
    expect(err.code).toBe('NO_RABBITMQ');
    expect(err.message).toMatch(/never skip/);
    expect(err.message).toMatch(/apt-get install rabbitmq-server/);
    expect(err.message).toMatch(/ZOOTT_AMQP_URL/);
    expect(err.message).toMatch(/testcontainers/);
  });
});
