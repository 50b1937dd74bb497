import { RabbitMqStartError } from './errors.js';
import { freePort, waitAmqp } from './ready.js';
import { type RabbitMqBroker, READY_TIMEOUT_MS } from './types.js';

/** Official image used on the Docker path; override with ZOOTT_RABBITMQ_IMAGE. */
const IMAGE = process.env.ZOOTT_RABBITMQ_IMAGE ?? 'rabbitmq:3.13';

type Testcontainers = typeof import('testcontainers');

/**
 * testcontainers, loaded only on this path (it is an optional dependency). This and
 * `dockerAvailable` repeat zk-testkit's: kept apart so the broker kit need not depend on the
 * published ZooKeeper kit, nor that kit export its Docker loading, for twenty lines.
 */
async function loadTestcontainers(): Promise<Testcontainers | null> {
  try {
    return await import('testcontainers');
  } catch {
    return null;
  }
}

/** Whether a Docker engine answers; the reason when not. */
export async function dockerAvailable(): Promise<true | string> {
  const tc = await loadTestcontainers();
  if (!tc) return 'testcontainers is not installed';
  try {
    await tc.getContainerRuntimeClient();
    return true;
  } catch (err) {
    return `no Docker engine answers (${(err as Error).message.split('\n')[0]})`;
  }
}

/**
 * Starts the official RabbitMQ image, its AMQP port published on a fixed free host port
 * so a restart keeps the URL. Used only where a Docker engine answers.
 */
export async function startDockerRabbitMq(): Promise<RabbitMqBroker> {
  const tc = await loadTestcontainers();
  if (!tc) throw new RabbitMqStartError('testcontainers is not installed');
  const port = await freePort();
  const started = await new tc.GenericContainer(IMAGE)
    .withExposedPorts({ container: 5672, host: port })
    .withWaitStrategy(tc.Wait.forListeningPorts())
    .start();
  const ready = async () => {
    const why = await waitAmqp('127.0.0.1', port, READY_TIMEOUT_MS);
    if (why) throw new RabbitMqStartError(`RabbitMQ container: ${why}`);
  };
  await ready();
  const runtime = await tc.getContainerRuntimeClient();
  const container = runtime.container.getById(started.getId());
  let running = true;
  return {
    kind: 'docker',
    port,
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    async stop(options = {}) {
      if (!running) return;
      running = false;
      await runtime.container.stop(container, { timeout: options.kill ? 0 : 30 });
    },
    async start() {
      if (running) return;
      await runtime.container.start(container);
      running = true;
      await ready();
    },
    async rabbitmqctl(args) {
      const result = await started.exec(['rabbitmqctl', ...args]);
      if (result.exitCode !== 0)
        throw new Error(
          `rabbitmqctl ${args.join(' ')} exited ${result.exitCode}: ${result.output}`,
        );
      return result.stdout;
    },
  };
}
