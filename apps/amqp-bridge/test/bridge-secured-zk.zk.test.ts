import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RabbitMqBroker, startRabbitMq } from '@zoott/rabbitmq-testkit';
import {
  makeZkTestCertificates,
  serverTls,
  startZooKeeper,
  type ZkTestCertificates,
  type ZooKeeperServer,
} from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  BRIDGE_BIN,
  exitsAtStart,
  kill,
  type Program,
  producer,
  resultInbox,
  SELF,
  startProgram,
  WORKER_BIN,
} from './harness.js';

// The bridge on a secured ZooKeeper (TLS with a client certificate, a SASL login), given the
// settings zoott-worker takes, by environment: a job in from RabbitMQ, run by a worker on the
// same secured ensemble, its result out; and a TLS connect that cannot work refused at start.

describe('zoott-amqp-bridge on a secured ZooKeeper', { timeout: 240_000 }, () => {
  let dir: string;
  let certs: ZkTestCertificates;
  let zk: ZooKeeperServer & { secureConnectString: string };
  let broker: RabbitMqBroker;
  let env: Record<string, string>;
  const programs: Program[] = [];

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'zoott-bridge-secured-'));
    certs = makeZkTestCertificates(join(dir, 'certs'));
    [zk, broker] = await Promise.all([
      startZooKeeper({
        heapMb: 128,
        security: { tls: serverTls(certs), sasl: { users: { bridge: 'bridge-secret' } } },
      }) as Promise<typeof zk>,
      startRabbitMq(),
    ]);
    const login = join(dir, 'login');
    writeFileSync(login, 'bridge:bridge-secret\n', { mode: 0o600 });
    env = {
      ZOOTT_CONNECT: `${zk.secureConnectString}/bridged`,
      ZOOTT_WORLD: 'jobs',
      ZOOTT_ZK_TLS_CA: certs.ca,
      ZOOTT_ZK_TLS_CERT: certs.client.cert,
      ZOOTT_ZK_TLS_KEY: certs.client.key,
      ZOOTT_ZK_SASL_FILE: login,
    };
  });
  afterAll(async () => {
    for (const p of programs) await kill(p);
    await Promise.allSettled([zk?.stop(), broker?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('moves a job in and its result out', async () => {
    const worker = startProgram(
      WORKER_BIN,
      ['--create-world', '--allow-exec', '/usr/bin/*', '--run-as', SELF],
      env,
    );
    programs.push(worker);
    await worker.logLine((l) => l.msg === 'worker started', 'worker started');
    const bridge = startProgram(BRIDGE_BIN, [], { ...env, ZOOTT_AMQP_URL: broker.url });
    programs.push(bridge);
    await bridge.logLine((l) => l.msg === 'bridge running', 'bridge running');

    const client = await producer(broker.url);
    try {
      await client.ch.assertExchange('results', 'direct', { durable: false });
      const inbox = await resultInbox(client.ch, 'results', 'rk-secured');
      await client.post('jobs', {
        executable: '/usr/bin/tr',
        arguments: ['a-z', 'A-Z'],
        stdin: 'through a secured zookeeper',
        exchange: 'results',
        routingkey: 'rk-secured',
      });
      const result = JSON.parse((await inbox.next()).content.toString()) as Record<string, unknown>;
      expect(result).toMatchObject({ stdout: 'THROUGH A SECURED ZOOKEEPER', exit: 0 });
    } finally {
      await client.conn.close().catch(() => {});
    }
  });

  it('refuses a server certificate from another CA at start: exit 3, saying so', async () => {
    const out = await exitsAtStart(
      [],
      { ...env, ZOOTT_ZK_TLS_CA: certs.otherCa, ZOOTT_AMQP_URL: broker.url },
      3,
    );
    expect(out).toMatch(/not signed by a trusted CA/);
    expect(out).toMatch(/--zk-tls-ca/);
  });
});
