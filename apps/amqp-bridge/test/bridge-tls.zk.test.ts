import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCertificates, type RabbitMqTls } from '@zoott/rabbitmq-testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  assertBuilt,
  BRIDGE_BIN,
  exitsAtStart,
  kill,
  type Program,
  resultInbox,
  startProgram,
} from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/**
 * The bridge over amqps against one broker that requires a client certificate (mutual TLS),
 * started once for the file. Each bridge here consumes queues of its own, so a refused bridge
 * and a working one never share a message.
 */
describe('zoott-amqp-bridge over TLS (amqps) against a real RabbitMQ', { timeout: 180_000 }, () => {
  let w: TestWorld;
  let tls: RabbitMqTls;
  let dir: string;

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'), { tls: { requirePeerCert: true } });
    if (!w.broker.tls) throw new Error('the test broker has no TLS listener');
    tls = w.broker.tls;
    dir = mkdtempSync(join(tmpdir(), 'zoott-bridge-tls-'));
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
  });
  afterAll(async () => {
    await w?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The TLS settings as flags: the broker's CA, and the client certificate unless `noCert`. */
  const tlsFlags = (options: { ca?: string; noCert?: boolean } = {}) => [
    '--amqp-url',
    tls.url,
    '--amqp-ca',
    options.ca ?? tls.certs.ca,
    ...(options.noCert
      ? []
      : ['--amqp-cert', tls.certs.clientCert, '--amqp-key', tls.certs.clientKey]),
  ];
  const queues = (name: string) => ['--job-queue', `${name}-jobs`, '--race-queue', `${name}-races`];

  /** Posts a job to `<name>-jobs` over TLS and returns its result as it comes back. */
  async function roundTrip(name: string, bridge: Program): Promise<Record<string, unknown>> {
    const inbox = await resultInbox(w.client.ch, 'results', `rk-${name}`);
    await w.client.post(`${name}-jobs`, {
      executable: '/usr/bin/tr',
      arguments: ['a-z', 'A-Z'],
      stdin: name,
      exchange: 'results',
      routingkey: `rk-${name}`,
    });
    const queued = await bridge.logLine(
      (l) => l.msg === 'job from AMQP queued' && l.queue === `${name}-jobs`,
      'the job queued',
    );
    expect(queued.outcome).toBe('queued');
    return JSON.parse((await inbox.next()).content.toString()) as Record<string, unknown>;
  }

  /**
   * Starts a bridge that must fail: a job waits in its queue first; the bridge exits with
   * 4 before consuming it, and the job is still in the queue and not in the world.
   */
  async function refused(name: string, args: string[]): Promise<string> {
    await w.client.ch.assertQueue(`${name}-jobs`, { durable: true });
    const body = JSON.stringify({ executable: '/usr/bin/true', routingkey: `rk-${name}` });
    await w.client.post(`${name}-jobs`, body, { messageId: `${name}-1` });
    const env = { ZOOTT_CONNECT: w.connect, ZOOTT_WORLD: w.world };
    const out = await exitsAtStart([...args, ...queues(name)], env, 4);
    const q = await w.client.ch.checkQueue(`${name}-jobs`);
    expect(q).toMatchObject({ messageCount: 1, consumerCount: 0 });
    expect(await w.hasBridgedTask(body, `${name}-1`)).toBe(false);
    return out;
  }

  it('mutual TLS with --amqp-ca, --amqp-cert and --amqp-key: a job goes in over TLS and its result comes back', async () => {
    const bridge = await w.bridge({}, [...tlsFlags(), ...queues('flags')]);
    const connected = await bridge.logLine((l) => l.msg === 'connected to RabbitMQ', 'connected');
    expect(connected.url).toBe(`amqps://guest:****@127.0.0.1:${tls.port}`);
    const r = await roundTrip('flags', bridge);
    expect(r).toMatchObject({ stdout: 'FLAGS', exit: 0, routingkey: 'rk-flags' });
  });

  it('the same through ZOOTT_AMQP_URL, ZOOTT_AMQP_CA, ZOOTT_AMQP_CERT and ZOOTT_AMQP_KEY', async () => {
    const bridge = await w.bridge(
      {
        ZOOTT_AMQP_URL: tls.url,
        ZOOTT_AMQP_CA: tls.certs.ca,
        ZOOTT_AMQP_CERT: tls.certs.clientCert,
        ZOOTT_AMQP_KEY: tls.certs.clientKey,
      },
      queues('env'),
    );
    expect((await roundTrip('env', bridge)).stdout).toBe('ENV');
  });

  it('the same through the config file (amqpUrl, amqpCa, amqpCert, amqpKey)', async () => {
    const file = join(dir, 'bridge.yaml');
    writeFileSync(
      file,
      [
        `amqpUrl: ${tls.url}`,
        `amqpCa: ${tls.certs.ca}`,
        `amqpCert: ${tls.certs.clientCert}`,
        `amqpKey: ${tls.certs.clientKey}`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    // Started without the world's helper, which puts the plain URL in the environment (where
    // it would win over the file's).
    const bridge = startProgram(BRIDGE_BIN, queues('file'), {
      ZOOTT_CONNECT: w.connect,
      ZOOTT_WORLD: w.world,
      ZOOTT_AMQP_BRIDGE_CONFIG: file,
    });
    try {
      await bridge.logLine((l) => l.msg === 'bridge running', 'bridge running');
      expect((await roundTrip('file', bridge)).stdout).toBe('FILE');
    } finally {
      await kill(bridge);
    }
  });

  it('without a client certificate the broker refuses the bridge: exit 4, the TLS failure named, nothing consumed', async () => {
    const out = await refused('nocert', tlsFlags({ noCert: true }));
    expect(out).toMatch(/TLS with RabbitMQ at amqps:\/\/guest:\*\*\*\*@127\.0\.0\.1:\d+ failed/);
    expect(out).toMatch(/certificate required/);
    expect(out).toMatch(/--amqp-cert and --amqp-key/);
  });

  it('a CA that did not sign the broker certificate: refused, exit 4, named; the job waits for a bridge that trusts it', async () => {
    const stranger = makeTestCertificates(join(dir, 'stranger'));
    const out = await refused('stranger', tlsFlags({ ca: stranger.ca }));
    expect(out).toMatch(
      /TLS with RabbitMQ at .* failed: self-signed certificate in certificate chain/,
    );
    expect(out).toMatch(/certificate is not trusted/);
    expect(out).toMatch(/--amqp-ca/);
    // The message the refused bridge left is taken by one with the right CA.
    const bridge = await w.bridge({}, [...tlsFlags(), ...queues('stranger')]);
    const queued = await bridge.logLine(
      (l) => l.msg === 'job from AMQP queued' && l.queue === 'stranger-jobs',
      'the waiting job queued',
    );
    expect(queued.outcome).toBe('queued');
  });

  // Last: it restarts the broker with new certificates, which the other tests' clients lack.
  it('a bridge that was connected retries a TLS failure rather than exiting (the broker changed its certificates)', async () => {
    const bridge = await w.bridge({}, [...tlsFlags(), ...queues('rotated')]);
    await bridge.logLine((l) => l.msg === 'connected to RabbitMQ', 'connected');
    await w.broker.stop();
    makeTestCertificates(tls.certs.dir); // a new CA and certificates, in the same files
    await w.broker.start();
    const line = await bridge.logLine(
      (l) => l.msg === 'TLS with RabbitMQ failed; retrying',
      'the TLS failure after the restart',
    );
    expect(line.level).toBe(50); // error
    expect(line.err).toMatch(/self-signed certificate in certificate chain/);
    expect(bridge.child.exitCode).toBeNull();
  });
});
