import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { dockerAvailable, startDockerZooKeeper } from './docker.js';
import { ZooKeeperStartError, ZooKeeperUnavailableError } from './errors.js';
import { serverMode } from './four-letter.js';
import { findLocalInstall, type LocalInstall } from './local-install.js';
import { LocalZooKeeper, type Peer } from './local-server.js';
import type { NetHost } from './netns.js';
import { freePort } from './ports.js';
import { removeOnExit } from './processes.js';
import type { ZooKeeperSecurity } from './security.js';
import type {
  StartEnsembleOptions,
  StartZooKeeperOptions,
  ZooKeeperEnsemble,
  ZooKeeperServer,
} from './types.js';

const DEFAULT_TICK_MS = 500;
/** Attempts per server when a just-found free port was taken before the JVM bound it. */
const PORT_ATTEMPTS = 3;

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  removeOnExit(dir);
  return dir;
}

function checkTick(tickTimeMs: number): number {
  if (!Number.isInteger(tickTimeMs) || tickTimeMs < 10 || tickTimeMs > 10_000) {
    throw new RangeError(`tickTimeMs must be an integer in 10..10000 ms, got ${tickTimeMs}`);
  }
  return tickTimeMs;
}

function external(connectString: string): ZooKeeperServer {
  return {
    connectString,
    kind: 'external',
    // Not ours to stop: these only stop/start *using* it.
    stop: async () => {},
    start: async () => {},
  };
}

/**
 * Gives a test a running ZooKeeper, in this order of preference:
 * 1. `ZOOTT_ZK_CONNECT` (unless `own`): that server, as is;
 * 2. a local install (`ZOOKEEPER_HOME`, or Debian's `zookeeper` package): a standalone JVM on
 *    127.0.0.1, on a free port, with its own data folder, ready once it answers `ruok`/`srvr`;
 * 3. a Docker engine: the official image through testcontainers.
 * Otherwise throws {@link ZooKeeperUnavailableError}, which names the three ways to get one.
 */
export async function startZooKeeper(
  options: StartZooKeeperOptions = {},
): Promise<ZooKeeperServer> {
  const tick = checkTick(options.tickTimeMs ?? DEFAULT_TICK_MS);
  if (options.security || options.config || options.jvmFlags) {
    // Secured or configured: ours, from a local install (the Docker path starts no TLS port,
    // no JAAS file, no configuration of the test's).
    const install = findLocalInstall();
    if ('missing' in install)
      throw new ZooKeeperUnavailableError([
        `a secured or configured server needs a local install: ${install.missing}`,
      ]);
    return startLocal(install, options.dataDir, tick, options.heapMb, options);
  }
  const fromEnv = process.env.ZOOTT_ZK_CONNECT;
  if (fromEnv && !options.own && !options.host) return external(fromEnv);

  const reasons: string[] = [];
  if (fromEnv) reasons.push('ZOOTT_ZK_CONNECT is set, but this test needs a server of its own');
  else reasons.push('ZOOTT_ZK_CONNECT is not set');

  const install = findLocalInstall();
  if ('missing' in install) reasons.push(install.missing);
  else return startLocal(install, options.dataDir, tick, options.heapMb, options);
  if (options.host) throw new ZooKeeperUnavailableError(reasons);

  const docker = await dockerAvailable();
  if (docker === true) return startDockerZooKeeper(tick);
  reasons.push(docker);
  throw new ZooKeeperUnavailableError(reasons);
}

async function startLocal(
  install: LocalInstall,
  dataDir: string | undefined,
  tickTimeMs: number,
  heapMb: number | undefined,
  extra: Pick<StartZooKeeperOptions, 'security' | 'config' | 'jvmFlags' | 'host'> = {},
): Promise<LocalZooKeeper> {
  const { security, host } = extra;
  const dir = dataDir ?? tempDir('zoott-zk-');
  mkdirSync(dir, { recursive: true });
  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const server = new LocalZooKeeper(install, {
      dir,
      // A host of its own has every port free: ZooKeeper's usual one.
      clientPort: host ? 2181 : await freePort(),
      tickTimeMs,
      ...(heapMb !== undefined ? { heapMb } : {}),
      ...(host ? { address: host.address, launcher: host.exec } : {}),
      ...(security ? { security } : {}),
      ...(security?.tls ? { secureClientPort: await freePort() } : {}),
      ...(extra.config ? { config: extra.config } : {}),
      ...(extra.jvmFlags ? { jvmFlags: extra.jvmFlags } : {}),
    });
    try {
      await server.start();
      return server;
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

/**
 * Starts `size` (default 3) servers on 127.0.0.1 with distinct client, quorum and election
 * ports, and waits until they elect a leader. Needs a local install: a test that stops the
 * leader has to own the processes. Throws {@link ZooKeeperUnavailableError} without one.
 */
export async function startEnsemble(
  options: StartEnsembleOptions = {},
): Promise<ZooKeeperEnsemble> {
  const hosts = options.hosts;
  const size = hosts?.length ?? options.size ?? 3;
  if (!Number.isInteger(size) || size < 3 || size % 2 === 0) {
    throw new RangeError(`an ensemble needs an odd size of at least 3, got ${size}`);
  }
  const tick = checkTick(options.tickTimeMs ?? DEFAULT_TICK_MS);
  const install = findLocalInstall();
  if ('missing' in install) {
    throw new ZooKeeperUnavailableError([`an ensemble needs a local install: ${install.missing}`]);
  }
  // A free port can be taken by another process before its server binds it (other test
  // files start servers and brokers meanwhile): on a bind failure, start again on new ports.
  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    try {
      return await startEnsembleOnce(
        install,
        size,
        tick,
        options.heapMb ?? 256,
        hosts,
        options.security,
      );
    } catch (err) {
      if (!isBindFailure(err)) throw err;
      lastError = err;
    }
  }
  throw lastError;
}

/** Whether a server could not start because a port it was given was taken meanwhile. */
function isBindFailure(err: unknown): boolean {
  return err instanceof ZooKeeperStartError && /Address already in use/.test(err.message);
}

async function startEnsembleOnce(
  install: LocalInstall,
  size: number,
  tick: number,
  heapMb: number,
  hosts: readonly NetHost[] | undefined,
  security: ZooKeeperSecurity | undefined,
): Promise<ZooKeeperEnsemble> {
  const root = tempDir('zoott-ensemble-');
  const peers: Peer[] = [];
  const clientPorts: number[] = [];
  const securePorts: number[] = [];
  for (let i = 0; i < size; i++) {
    const host = hosts?.[i];
    // A host of its own has every port free: ZooKeeper's usual ones.
    if (host) {
      peers.push({ id: i + 1, quorumPort: 2888, electionPort: 3888, address: host.address });
      clientPorts.push(2181);
      continue;
    }
    peers.push({ id: i + 1, quorumPort: await freePort(), electionPort: await freePort() });
    clientPorts.push(await freePort());
    if (security?.tls) securePorts.push(await freePort());
  }
  const members = peers.map(
    (peer, index) =>
      new LocalZooKeeper(install, {
        dir: path.join(root, `server-${peer.id}`),
        clientPort: clientPorts[index]!,
        tickTimeMs: tick,
        heapMb,
        ensemble: { peers, myId: peer.id },
        ...(hosts?.[index] ? { address: hosts[index]!.address, launcher: hosts[index]!.exec } : {}),
        ...(security ? { security } : {}),
        ...(security?.tls ? { secureClientPort: securePorts[index]! } : {}),
      }),
  );
  const ensemble = new LocalEnsemble(members);
  try {
    await Promise.all(members.map((m) => m.start({ waitServing: false })));
    await ensemble.waitServing();
  } catch (err) {
    await ensemble.stop();
    throw err;
  }
  return ensemble;
}

const SERVING_TIMEOUT_MS = 60_000;

class LocalEnsemble implements ZooKeeperEnsemble {
  readonly connectString: string;
  readonly secureConnectString: string | undefined;

  constructor(readonly members: LocalZooKeeper[]) {
    this.connectString = members.map((m) => m.connectString).join(',');
    this.secureConnectString = members.every((m) => m.secureConnectString)
      ? members.map((m) => m.secureConnectString).join(',')
      : undefined;
  }

  async waitServing(): Promise<void> {
    const deadline = Date.now() + SERVING_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const running = this.members.filter((m) => m.running);
      const modes = await Promise.all(running.map((m) => serverMode(m.connectString)));
      if (modes.every((m) => m !== null) && modes.includes('leader')) return;
      await sleep(100);
    }
    throw new ZooKeeperStartError(
      `the ensemble did not elect a leader within ${SERVING_TIMEOUT_MS} ms:\n${this.members
        .map((m, i) => `--- member ${i}\n${m.logTail(8)}`)
        .join('\n')}`,
    );
  }

  async leader(): Promise<number> {
    const deadline = Date.now() + SERVING_TIMEOUT_MS;
    while (Date.now() < deadline) {
      for (const [index, member] of this.members.entries()) {
        if (member.running && (await serverMode(member.connectString)) === 'leader') return index;
      }
      await sleep(100);
    }
    throw new ZooKeeperStartError(`no member is leader after ${SERVING_TIMEOUT_MS} ms`);
  }

  private member(index: number): LocalZooKeeper {
    const member = this.members[index];
    if (!member)
      throw new RangeError(`no ensemble member ${index} (0..${this.members.length - 1})`);
    return member;
  }

  async stopMember(index: number, options: { signal?: 'SIGTERM' | 'SIGKILL' } = {}): Promise<void> {
    await this.member(index).stop({ signal: options.signal ?? 'SIGKILL' });
  }

  async startMember(index: number): Promise<void> {
    await this.member(index).start({ waitServing: true });
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((m) => m.stop()));
  }
}
