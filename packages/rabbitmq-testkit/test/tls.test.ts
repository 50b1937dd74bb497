import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  makeTestCertificates,
  opensslBinary,
  type RabbitMqBroker,
  RabbitMqStartError,
  type RabbitMqTls,
  startRabbitMq,
} from '../src/index.js';

/** Opens and closes one amqps connection with these TLS options; resolves, or rejects why not. */
async function connectOnce(url: string, options: Record<string, unknown>): Promise<void> {
  const conn = await amqp.connect(url, options);
  const ch = await conn.createChannel();
  await ch.checkQueue((await ch.assertQueue('', { exclusive: true })).queue);
  await conn.close();
}

describe('rabbitmq-testkit: a broker with a TLS listener', { timeout: 180_000 }, () => {
  let broker: RabbitMqBroker;
  let tls: RabbitMqTls;
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'zoott-tls-test-'));
    broker = await startRabbitMq({ tls: true });
    if (!broker.tls) throw new Error('startRabbitMq({ tls: true }) gave a broker without TLS');
    tls = broker.tls;
  });
  afterAll(async () => {
    await broker?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('is a broker of its own, on a TLS port of its own, with certificates made for it', () => {
    expect(broker.kind).toBe('local');
    expect(tls.port).not.toBe(broker.port);
    expect(tls.url).toBe(`amqps://guest:guest@127.0.0.1:${tls.port}`);
    expect(tls.requirePeerCert).toBe(false);
    const conf = readFileSync(path.join(path.dirname(tls.certs.dir), 'rabbitmq.conf'), 'utf8');
    expect(conf).toContain(`listeners.ssl.default = 127.0.0.1:${tls.port}`);
    expect(conf).toContain('ssl_options.verify = verify_peer');
    expect(conf).toContain('ssl_options.fail_if_no_peer_cert = false');
  });

  it('takes a client that checks it against the CA, with or without a client certificate', async () => {
    const ca = [readFileSync(tls.certs.ca)];
    await connectOnce(tls.url, { ca });
    await connectOnce(tls.url, {
      ca,
      cert: readFileSync(tls.certs.clientCert),
      key: readFileSync(tls.certs.clientKey),
    });
  });

  it('a client that trusts another CA refuses the broker; a client certificate of another CA is refused by it', async () => {
    const other = makeTestCertificates(path.join(scratch, 'other'));
    await expect(connectOnce(tls.url, { ca: [readFileSync(other.ca)] })).rejects.toThrow(
      /unable to get local issuer certificate|self.signed certificate/,
    );
    // verify_peer: a certificate the client does present is checked against the broker's CA.
    await expect(
      connectOnce(tls.url, {
        ca: [readFileSync(tls.certs.ca)],
        cert: readFileSync(other.clientCert),
        key: readFileSync(other.clientKey),
      }),
    ).rejects.toThrow(/alert unknown ca/);
  });

  it('without the openssl binary no certificates are made: an error saying how to install it (never a skip)', () => {
    const none = { debian: path.join(scratch, 'no-openssl'), path: scratch };
    expect(() => opensslBinary(none)).toThrow(RabbitMqStartError);
    expect(() => opensslBinary(none)).toThrow(/apt-get install openssl/);
    expect(opensslBinary()).toMatch(/openssl$/);
  });
});
