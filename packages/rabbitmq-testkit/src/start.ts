import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTestCertificates } from './certs.js';
import { dockerAvailable, startDockerRabbitMq } from './docker.js';
import { RabbitMqStartError, RabbitMqUnavailableError } from './errors.js';
import { LocalRabbitMq, localInstall } from './local.js';
import { freePort } from './ready.js';
import type { RabbitMqBroker, StartRabbitMqOptions } from './types.js';

const tempDirs = new Set<string>();
let hooked = false;

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zoott-rabbitmq-'));
  tempDirs.add(dir);
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const createdDir of tempDirs) rmSync(createdDir, { recursive: true, force: true });
    });
  }
  return dir;
}

let counter = 0;

function external(url: string): RabbitMqBroker {
  const port = Number(new URL(url).port || 5672);
  return {
    url,
    port,
    kind: 'external',
    // Not ours to stop or start.
    stop: async () => {},
    start: async () => {},
    rabbitmqctl: async () => {
      throw new Error(
        `rabbitmqctl: the broker of ZOOTT_AMQP_URL (${url}) is not this test's own; start one with own: true`,
      );
    },
  };
}

/**
 * Gives a test a running RabbitMQ broker, in this order of preference:
 * 1. `ZOOTT_AMQP_URL` (unless `own`): that broker, as is;
 * 2. Debian's `rabbitmq-server`: a private broker (own node name, free ports, data and log
 *    folders, its own epmd), ready once it answers the AMQP protocol header;
 * 3. a Docker engine: the official image through testcontainers (not with `tls`).
 * Otherwise throws {@link RabbitMqUnavailableError}: a RabbitMQ test never skips.
 */
export async function startRabbitMq(options: StartRabbitMqOptions = {}): Promise<RabbitMqBroker> {
  const fromEnv = process.env.ZOOTT_AMQP_URL;
  // A TLS listener needs the broker's config and certificates: only a broker of our own has them.
  const own = options.own || Boolean(options.tls);
  if (fromEnv && !own) return external(fromEnv);
  const reasons = [
    fromEnv
      ? 'ZOOTT_AMQP_URL is set, but this test needs a broker of its own'
      : 'ZOOTT_AMQP_URL is not set',
  ];
  const local = localInstall();
  if (local === true) {
    const dir = options.dir ?? tempDir();
    mkdirSync(dir, { recursive: true });
    counter += 1;
    const tls = options.tls
      ? {
          port: await freePort(),
          certs: makeTestCertificates(path.join(dir, 'certs')),
          requirePeerCert: typeof options.tls === 'object' && options.tls.requirePeerCert === true,
        }
      : undefined;
    const broker = new LocalRabbitMq({
      dir,
      nodeName: `zoott-test-${process.pid}-${counter}@localhost`,
      port: await freePort(),
      distPort: await freePort(),
      epmdPort: await freePort(),
      ...(tls ? { tls } : {}),
    });
    await broker.start();
    return broker;
  }
  reasons.push(local);
  // The Docker path starts the image as is, without a TLS listener.
  if (options.tls)
    throw new RabbitMqStartError(
      `a broker with TLS is started only from Debian's rabbitmq-server package (${local}); neither ZOOTT_AMQP_URL nor Docker gives one: sudo apt-get install rabbitmq-server`,
    );
  const docker = await dockerAvailable();
  if (docker === true) return startDockerRabbitMq();
  reasons.push(docker);
  throw new RabbitMqUnavailableError(reasons);
}
