import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprintOf, TASK_PREFIX } from '@zoott/amqp-bridge';
import { createEngine } from '@zoott/core';
import { worldRoot } from '@zoott/core/internal';
import {
  type RabbitMqBroker,
  type StartRabbitMqOptions,
  startRabbitMq,
} from '@zoott/rabbitmq-testkit';
import { freshChroot } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
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
  /** Every worker of the world (`worker` is the first). */
  workers: Program[];
  /** Whether the world holds a task of this name (queued, running or completed). */
  hasTask: (name: string) => Promise<boolean>;
  /** Whether the world holds a task the bridge queued for a message of this body (and id). */
  hasBridgedTask: (body: string, messageId?: string) => Promise<boolean>;
  /** Starts a bridge on this world (extra env, e.g. a test pause). */
  bridge: (env?: Record<string, string>, args?: string[]) => Promise<Program>;
  close: () => Promise<void>;
}

/**
 * `own`: a broker of this test's own, which it may kill and restart. `tls`: a broker with a
 * TLS listener too (see @zoott/rabbitmq-testkit); the test's client then publishes over TLS,
 * with the broker's CA and client certificate.
 */
export async function testWorld(
  zkServer: string,
  options: { own?: boolean; tls?: StartRabbitMqOptions['tls']; workers?: number } = {},
): Promise<TestWorld> {
  const broker = await startRabbitMq({
    own: options.own ?? false,
    ...(options.tls ? { tls: options.tls } : {}),
  });
  const { connectString: connect } = await freshChroot(zkServer, 'amqp');
  const world = 'jobs';
  const dataDir = mkdtempSync(join(tmpdir(), 'zoott-amqp-data-'));
  const programs: Program[] = [];
  const startWorker = () =>
    startProgram(
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
  const workers: Program[] = [];
  for (let i = 0; i < (options.workers ?? 1); i++) {
    const worker = startWorker();
    programs.push(worker);
    workers.push(worker);
    // One at a time: the first creates the world the others find.
    await worker.logLine((l) => l.msg === 'worker started', 'worker started');
  }
  const worker = workers[0]!;
  const tls = broker.tls;
  const client = tls
    ? await producer(tls.url, {
        ca: [readFileSync(tls.certs.ca)],
        cert: readFileSync(tls.certs.clientCert),
        key: readFileSync(tls.certs.clientKey),
      })
    : await producer(broker.url);
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
  const hasTask = async (name: string) => {
    const zk = await connectZk(connect);
    try {
      return (await createEngine(zk, { world }).task([name])) !== null;
    } finally {
      await zk.close();
    }
  };
  const hasBridgedTask = async (body: string, messageId?: string) => {
    const prefix = `${TASK_PREFIX}job-${fingerprintOf('regular', Buffer.from(body), messageId).slice(0, 12)}-`;
    const zk = await connectZk(connect);
    try {
      return (await zk.children(worldRoot(world))).some((n) => n.startsWith(prefix));
    } finally {
      await zk.close();
    }
  };
  return {
    broker,
    hasBridgedTask,
    connect,
    world,
    dataDir,
    client,
    worker,
    workers,
    hasTask,
    bridge,
    close: async () => {
      await client.conn.close().catch(() => {});
      for (const p of programs) await kill(p);
      await broker.stop();
    },
  };
}
