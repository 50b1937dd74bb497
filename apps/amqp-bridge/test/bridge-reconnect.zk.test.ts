import { type AmqpBridge, type BridgeLogger, startAmqpBridge } from '@zoott/amqp-bridge';
import { connectZk, killSession, type ZkCoordinator } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, producer, resultInbox } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/** A logger that keeps every line, and lets a test wait for one. */
function recordingLogger() {
  const lines: Array<{ msg: string; obj: object }> = [];
  const waiters: Array<{ match: (msg: string) => boolean; after: number; resolve: () => void }> =
    [];
  const add = (obj: object, msg: string) => {
    lines.push({ msg, obj });
    for (const w of [...waiters])
      if (lines.length > w.after && w.match(msg)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  const logger: BridgeLogger = { debug: add, info: add, warn: add, error: add };
  /** Resolves at the next line (from now on) whose message `match` accepts. */
  const next = (match: (msg: string) => boolean) =>
    new Promise<void>((resolve) => waiters.push({ match, after: lines.length, resolve }));
  return { logger, next, lines };
}

describe('zoott-amqp-bridge carries on after losing RabbitMQ or its ZooKeeper session', {
  timeout: 180_000,
}, () => {
  let w: TestWorld;
  let zk: ZkCoordinator;
  let bridge: AmqpBridge;
  const log = recordingLogger();

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'), { own: true });
    zk = await connectZk(w.connect);
    bridge = await startAmqpBridge({
      coordinator: zk,
      world: w.world,
      url: w.broker.url,
      logger: log.logger,
    });
  });
  afterAll(async () => {
    await bridge?.stop();
    await zk?.close();
    await w?.close();
  });

  const roundTrip = async (client: Awaited<ReturnType<typeof producer>>, text: string) => {
    await client.ch.assertExchange('results', 'direct', { durable: false });
    const inbox = await resultInbox(client.ch, 'results', `rk-${text}`);
    await client.post('jobs', {
      executable: '/usr/bin/echo',
      arguments: [text],
      exchange: 'results',
      routingkey: `rk-${text}`,
    });
    return (JSON.parse((await inbox.next()).content.toString()) as { stdout: string }).stdout;
  };

  it('a lost ZooKeeper session is renewed and jobs flow again', async () => {
    expect(await roundTrip(w.client, 'before')).toBe('before\n');
    const renewed = log.next((m) => m === 'ZooKeeper session renewed');
    await killSession(zk);
    await renewed;
    expect(zk.state).toBe('connected');
    expect(await roundTrip(w.client, 'after-zk')).toBe('after-zk\n');
  });

  it('a RabbitMQ broker that crashed and came back is reconnected to', async () => {
    const lost = log.next((m) => m === 'RabbitMQ connection lost; reconnecting');
    await w.broker.stop({ kill: true });
    await lost;
    const back = log.next((m) => m === 'connected to RabbitMQ');
    await w.broker.start();
    await back;
    const client = await producer(w.broker.url);
    try {
      expect(await roundTrip(client, 'after-mq')).toBe('after-mq\n');
    } finally {
      await client.conn.close();
    }
  });
});
