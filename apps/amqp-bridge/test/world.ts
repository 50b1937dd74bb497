import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RabbitMqBroker, startRabbitMq } from '@zoott/rabbitmq-testkit';
import { freshChroot } from '@zoott/testing';
import {
  BRIDGE_BIN,
  kill,
  type Program,
  producer,
  SELF,
  startProgram,
  WORKER_BIN,
} from './harness.js';

/** One test world: a broker, a ZooKeeper namespace, a worker serving `jobs`, a producer. */
export interface TestWorld {
  broker: RabbitMqBroker;
  connect: string;
  world: string;
  dataDir: string;
  client: Awaited<ReturnType<typeof producer>>;
  worker: Program;
  /** Starts a bridge on this world (extra env, e.g. a test pause). */
  bridge: (env?: Record<string, string>, args?: string[]) => Promise<Program>;
  close: () => Promise<void>;
}

/** `own`: a broker of this test's own, which it may kill and restart. */
export async function testWorld(
  zkServer: string,
  options: { own?: boolean } = {},
): Promise<TestWorld> {
  const broker = await startRabbitMq({ own: options.own ?? false });
  const { connectString: connect } = await freshChroot(zkServer, 'amqp');
  const world = 'jobs';
  const dataDir = mkdtempSync(join(tmpdir(), 'zoott-amqp-data-'));
  const programs: Program[] = [];
  const worker = startProgram(
    WORKER_BIN,
    [
      '--world',
      world,
      '--create-world',
      '--allow-exec',
      '/usr/bin/*',
      '--run-as',
      SELF,
      '--concurrency',
      '4',
      '--max-output',
      '4096',
      '--data-dir',
      dataDir,
      '--locality-wait',
      '100',
    ],
    { ZOOTT_CONNECT: connect },
  );
  programs.push(worker);
  await worker.logLine((l) => l.msg === 'worker started', 'worker started');
  const client = await producer(broker.url);
  const bridge = async (env: Record<string, string> = {}, args: string[] = []) => {
    const p = startProgram(BRIDGE_BIN, args, {
      ZOOTT_CONNECT: connect,
      ZOOTT_WORLD: world,
      ZOOTT_AMQP_URL: broker.url,
      ...env,
    });
    programs.push(p);
    await p.logLine((l) => l.msg === 'bridge running', 'bridge running');
    return p;
  };
  return {
    broker,
    connect,
    world,
    dataDir,
    client,
    worker,
    bridge,
    close: async () => {
      await client.conn.close().catch(() => {});
      for (const p of programs) await kill(p);
      await broker.stop();
    },
  };
}
