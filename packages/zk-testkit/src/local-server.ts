import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ZooKeeperStartError } from './errors.js';
import { fourLetter, serverMode } from './four-letter.js';
import { READY_TIMEOUT_MS, STOP_GRACE_MS, sessionTimeoutRange } from './limits.js';
import type { LocalInstall } from './local-install.js';
import { exited, guard } from './processes.js';
import { securityConfigLines, securityJvmFlags, type ZooKeeperSecurity } from './security.js';
import type { StopOptions, ZooKeeperServer } from './types.js';

/** One member of an ensemble as it appears in every member's zoo.cfg. */
export interface Peer {
  id: number;
  quorumPort: number;
  electionPort: number;
  /** Its address (default 127.0.0.1): a host of a namespace network has its own. */
  address?: string;
}

export interface LocalServerLayout {
  /** Folder holding zoo.cfg, the logs and `data/`. */
  dir: string;
  clientPort: number;
  tickTimeMs: number;
  /**
   * Java heap in MiB. ZooKeeper keeps the whole tree in memory: at 128 MiB a world of
   * 100,000 pending tasks filled the old generation and halved throughput, so the default
   * leaves room for the scale test and the benchmark.
   */
  heapMb?: number;
  /** Set for an ensemble member: all members, and this server's id among them. */
  ensemble?: { peers: readonly Peer[]; myId: number };
  /** Address the client port binds (default 127.0.0.1). */
  address?: string;
  /** Command line prefix the JVM is started with (a namespace's `ip netns exec <ns>`). */
  launcher?: readonly string[];
  /** TLS and SASL of a secured server (TLS needs `secureClientPort`). */
  security?: ZooKeeperSecurity;
  secureClientPort?: number;
  /** zoo.cfg lines appended after the testkit's own. */
  config?: readonly string[];
  /** More JVM flags. */
  jvmFlags?: readonly string[];
}

/** Standalone default; ensemble members get less (three JVMs share the machine). */
export const DEFAULT_HEAP_MB = 512;

/** A ZooKeeper JVM started from the local install. */
export class LocalZooKeeper implements ZooKeeperServer {
  readonly kind = 'local' as const;
  readonly connectString: string;
  /** `127.0.0.1:port` of the TLS client port, for a server with TLS. */
  readonly secureConnectString: string | undefined;
  private child: ChildProcess | null = null;
  private retireWatchdog: () => void = () => {};

  constructor(
    private readonly install: LocalInstall,
    readonly layout: LocalServerLayout,
  ) {
    const address = layout.address ?? '127.0.0.1';
    this.connectString = `${address}:${layout.clientPort}`;
    this.secureConnectString =
      layout.security?.tls && layout.secureClientPort !== undefined
        ? `${address}:${layout.secureClientPort}`
        : undefined;
    writeConfig(layout);
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Starts the JVM and waits until it answers `ruok` (and `srvr` reports a mode, if asked). */
  async start(options: { waitServing?: boolean } = {}): Promise<void> {
    if (this.child) return;
    const { dir } = this.layout;
    const out = openSync(path.join(dir, 'stdout.log'), 'a');
    // `ip netns exec` replaces itself with the JVM: the child's pid is the JVM's.
    const [command, ...prefix] = [...(this.layout.launcher ?? []), this.install.java];
    const child = spawn(
      command!,
      [
        ...prefix,
        `-Xmx${this.layout.heapMb ?? DEFAULT_HEAP_MB}m`,
        '-Xms16m',
        '-XX:+UseSerialGC',
        // C1 only: the server is short-lived and C2 compilation would eat a core at startup.
        '-XX:TieredStopAtLevel=1',
        '-XX:-UsePerfData',
        '-Djava.awt.headless=true',
        `-Dlog4j.configuration=file:${path.join(dir, 'log4j.properties')}`,
        `-Dlogback.configurationFile=${path.join(dir, 'logback.xml')}`,
        '-Dzookeeper.jmx.log4j.disable=true',
        ...securityJvmFlags(this.layout.security, dir),
        ...(this.layout.jvmFlags ?? []),
        '-cp',
        this.install.classpath,
        'org.apache.zookeeper.server.quorum.QuorumPeerMain',
        path.join(dir, 'zoo.cfg'),
      ],
      { stdio: ['ignore', out, out] },
    );
    closeSync(out);
    child.unref();
    this.child = child;
    this.retireWatchdog = guard(child);
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    try {
      await this.waitReady(child, options.waitServing ?? !this.layout.ensemble);
    } catch (err) {
      await this.stop({ signal: 'SIGKILL' });
      throw err;
    }
  }

  async stop(options: StopOptions = {}): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.retireWatchdog();
    child.kill(options.signal ?? 'SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited(child);
    clearTimeout(timer);
    this.child = null;
  }

  /** The last lines of the server's log and console output, for error messages. */
  logTail(lines = 15): string {
    const tail = (file: string) => {
      const filePath = path.join(this.layout.dir, file);
      if (!existsSync(filePath)) return '';
      return readFileSync(filePath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    };
    return [tail('stdout.log'), tail('zookeeper.log')].filter(Boolean).join('\n');
  }

  private async waitReady(child: ChildProcess, serving: boolean): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new ZooKeeperStartError(
          `ZooKeeper on port ${this.layout.clientPort} exited (${child.exitCode ?? child.signalCode}) before it was ready; log in ${this.layout.dir}:\n${this.logTail()}`,
        );
      }
      const ok = await fourLetter(this.connectString, 'ruok', 1000).catch(() => '');
      if (ok === 'imok' && (!serving || (await serverMode(this.connectString)) !== null)) return;
      await sleep(50);
    }
    throw new ZooKeeperStartError(
      `ZooKeeper on port ${this.layout.clientPort} was not ready after ${READY_TIMEOUT_MS} ms; log in ${this.layout.dir}:\n${this.logTail()}`,
    );
  }
}

function writeConfig(layout: LocalServerLayout): void {
  const { dir, clientPort, tickTimeMs, ensemble } = layout;
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const sessions = sessionTimeoutRange(tickTimeMs);
  const lines = [
    `tickTime=${tickTimeMs}`,
    `dataDir=${dataDir}`,
    `clientPort=${clientPort}`,
    `clientPortAddress=${layout.address ?? '127.0.0.1'}`,
    // Tests open many sessions from one address; the default cap of 60 would refuse them.
    'maxClientCnxns=0',
    `minSessionTimeout=${sessions.minMs}`,
    `maxSessionTimeout=${sessions.maxMs}`,
    'admin.enableServer=false',
    '4lw.commands.whitelist=*',
    'autopurge.purgeInterval=0',
    ...(layout.security ? securityConfigLines(layout.security, layout.secureClientPort) : []),
    ...(layout.config ?? []),
  ];
  if (ensemble) {
    lines.push('initLimit=20', 'syncLimit=10', 'standaloneEnabled=false', 'reconfigEnabled=false');
    for (const peer of ensemble.peers) {
      lines.push(
        `server.${peer.id}=${peer.address ?? '127.0.0.1'}:${peer.quorumPort}:${peer.electionPort}`,
      );
    }
    writeFileSync(path.join(dataDir, 'myid'), `${ensemble.myId}\n`);
  }
  writeFileSync(path.join(dir, 'zoo.cfg'), `${lines.join('\n')}\n`);
  const logFile = path.join(dir, 'zookeeper.log');
  // Debian's build logs through log4j 1.2, Apache's 3.8 releases through logback: configure both.
  writeFileSync(
    path.join(dir, 'log4j.properties'),
    [
      'log4j.rootLogger=INFO, FILE',
      'log4j.appender.FILE=org.apache.log4j.FileAppender',
      `log4j.appender.FILE.File=${logFile}`,
      'log4j.appender.FILE.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(dir, 'logback.xml'),
    `<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>${logFile}</file>
    <encoder><pattern>%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
`,
  );
}
