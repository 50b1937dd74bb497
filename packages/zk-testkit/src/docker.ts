import { setTimeout as sleep } from 'node:timers/promises';
import { ZooKeeperStartError } from './errors.js';
import { fourLetter } from './four-letter.js';
import { READY_TIMEOUT_MS, STOP_GRACE_MS, sessionTimeoutRange } from './limits.js';
import { freePort } from './ports.js';
import type { ZooKeeperServer } from './types.js';

/** Official image used on the Docker path; override with ZOOTT_ZK_IMAGE. */
const IMAGE = process.env.ZOOTT_ZK_IMAGE ?? 'zookeeper:3.8';

type Testcontainers = typeof import('testcontainers');

/** testcontainers, loaded only on this path (it is an optional dependency). */
async function loadTestcontainers(): Promise<Testcontainers | null> {
  try {
    return await import('testcontainers');
  } catch {
    return null;
  }
}

/** Whether a Docker engine answers; returns the reason when not. */
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

async function waitImok(connectString: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await fourLetter(connectString, 'ruok', 1000).catch(() => '')) === 'imok') return;
    await sleep(100);
  }
  throw new ZooKeeperStartError(`ZooKeeper container at ${connectString} did not answer ruok`);
}

/** Starts the official ZooKeeper image, published on a fixed free port so restarts keep it. */
export async function startDockerZooKeeper(tickTimeMs: number): Promise<ZooKeeperServer> {
  const tc = await loadTestcontainers();
  if (!tc) throw new ZooKeeperStartError('testcontainers is not installed');
  const hostPort = await freePort();
  const sessions = sessionTimeoutRange(tickTimeMs);
  const started = await new tc.GenericContainer(IMAGE)
    .withExposedPorts({ container: 2181, host: hostPort })
    .withEnvironment({
      ZOO_TICK_TIME: String(tickTimeMs),
      ZOO_4LW_COMMANDS_WHITELIST: '*',
      ZOO_ADMINSERVER_ENABLED: 'false',
      ZOO_MAX_CLIENT_CNXNS: '0',
      // The same session range as a local server (the image's default stops at 20 ticks).
      ZOO_CFG_EXTRA: `minSessionTimeout=${sessions.minMs} maxSessionTimeout=${sessions.maxMs}`,
    })
    .withWaitStrategy(tc.Wait.forListeningPorts())
    .start();
  const connectString = `127.0.0.1:${hostPort}`;
  await waitImok(connectString, READY_TIMEOUT_MS);
  const runtime = await tc.getContainerRuntimeClient();
  const container = runtime.container.getById(started.getId());
  let running = true;
  return {
    connectString,
    kind: 'docker',
    async stop(options = {}) {
      if (!running) return;
      running = false;
      // SIGKILL is a crash: no grace period.
      await runtime.container.stop(container, {
        timeout: options.signal === 'SIGKILL' ? 0 : STOP_GRACE_MS / 1000,
      });
    },
    async start() {
      if (running) return;
      await runtime.container.start(container);
      running = true;
      await waitImok(connectString, READY_TIMEOUT_MS);
    },
  };
}
