import type { RabbitMqTls } from '@zoott/rabbitmq-testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, resultInbox } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/**
 * Server-authenticated TLS: the bridge checks the broker's certificate against `--amqp-ca`
 * and presents none of its own, against a broker whose TLS listener checks a certificate a
 * client presents but does not require one (`fail_if_no_peer_cert = false`).
 */
describe('zoott-amqp-bridge with only --amqp-ca against a real RabbitMQ', {
  timeout: 180_000,
}, () => {
  let w: TestWorld;
  let tls: RabbitMqTls;

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'), { tls: true });
    if (!w.broker.tls) throw new Error('the test broker has no TLS listener');
    tls = w.broker.tls;
  });
  afterAll(async () => {
    await w?.close();
  });

  /**
   * The broker's open connections on its TLS port: whether TLS, and the client's certificate.
   * Only those past the AMQP handshake (`running`): the test kit's readiness probe sends the
   * protocol header, reads `connection.start` and hangs up, and the broker may still list that
   * half-opened connection for a moment (CI once saw it beside the test's own client).
   */
  const tlsConnections = async () => {
    const out = await w.broker.rabbitmqctl([
      'list_connections',
      'port',
      'state',
      'ssl',
      'peer_cert_subject',
      '--formatter',
      'json',
      '-q',
    ]);
    type Row = { port: number; state: string; ssl: boolean; peer_cert_subject: unknown };
    return (JSON.parse(out) as Row[])
      .filter((c) => c.port === tls.port && c.state === 'running')
      .map((c) => ({
        ssl: c.ssl,
        clientCert: typeof c.peer_cert_subject === 'string' && c.peer_cert_subject !== '',
      }));
  };

  it('connects with the CA alone, presents no client certificate, and moves a job in and its result out', async () => {
    expect(tls.requirePeerCert).toBe(false);
    // Before the bridge: only the test's own client, which presents its certificate.
    expect(await tlsConnections()).toEqual([{ ssl: true, clientCert: true }]);

    const bridge = await w.bridge({}, ['--amqp-url', tls.url, '--amqp-ca', tls.certs.ca]);
    const connected = await bridge.logLine((l) => l.msg === 'connected to RabbitMQ', 'connected');
    expect(connected.url).toBe(`amqps://guest:****@127.0.0.1:${tls.port}`);
    // The broker's view: the bridge's connection is TLS and came without a certificate.
    const seen = await tlsConnections();
    expect(seen).toHaveLength(2);
    expect(seen).toContainEqual({ ssl: true, clientCert: false });

    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-ca-only');
    await w.client.post('jobs', {
      executable: '/usr/bin/tr',
      arguments: ['a-z', 'A-Z'],
      stdin: 'server authenticated',
      exchange: 'results',
      routingkey: 'rk-ca-only',
    });
    const queued = await bridge.logLine((l) => l.msg === 'job from AMQP queued', 'the job queued');
    expect(queued).toMatchObject({ queue: 'jobs', outcome: 'queued' });
    const result = JSON.parse((await inbox.next()).content.toString()) as Record<string, unknown>;
    expect(result).toMatchObject({
      stdout: 'SERVER AUTHENTICATED',
      exit: 0,
      exchange: 'results',
      routingkey: 'rk-ca-only',
    });
  });
});
