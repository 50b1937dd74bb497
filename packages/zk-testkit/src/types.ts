import type { NetHost } from './netns.js';
import type { ZooKeeperSecurity } from './security.js';

/** A running ZooKeeper server that a test can use (and, unless external, stop and restart). */
export interface ZooKeeperServer {
  /** `127.0.0.1:port` of the client port. */
  readonly connectString: string;
  /** `127.0.0.1:port` of the TLS client port (`secureClientPort`) of a server started with TLS. */
  readonly secureConnectString?: string | undefined;
  /**
   * Where it runs: `external` (ZOOTT_ZK_CONNECT; stop/start do nothing, it is not ours),
   * `local` (a JVM from the local install), `docker` (a testcontainers container).
   */
  readonly kind: 'external' | 'local' | 'docker';
  /**
   * Stops the server and resolves once the process is gone. `SIGKILL` simulates a crash;
   * the default lets the server shut down cleanly. Idempotent.
   */
  stop(options?: StopOptions): Promise<void>;
  /** Starts it again after `stop()`, on the same port and with the same data. */
  start(): Promise<void>;
}

/** How a server is stopped: SIGTERM (clean) or SIGKILL (a crash). */
export interface StopOptions {
  signal?: 'SIGTERM' | 'SIGKILL';
}

/** Options of `startZooKeeper`: data folder, tick time, heap size, and whether to start an own server. */
export interface StartZooKeeperOptions {
  /** Data folder to use (kept afterwards); default: a fresh temporary folder, removed at exit. */
  dataDir?: string;
  /**
   * ZooKeeper's tick in ms (default 500). The server accepts session timeouts from 2 to 120
   * ticks, so a small tick lets tests use short session timeouts.
   */
  tickTimeMs?: number;
  /** Java heap of a local server in MiB (default 512; ZooKeeper holds the whole tree in memory). */
  heapMb?: number;
  /**
   * Ignore ZOOTT_ZK_CONNECT and start a server of our own: for tests that stop, restart or
   * otherwise disturb the server.
   */
  own?: boolean;
  /**
   * Run the server on a host of a namespace network (its address, ZooKeeper's usual port), so
   * a test can cut it off with `setCut`. A local install only; implies `own`.
   */
  host?: NetHost;
  /**
   * TLS (a `secureClientPort`, client certificates, `x509` ids) and SASL DIGEST-MD5 users.
   * A secured server is always a local one of the test's own (`own` is implied).
   */
  security?: ZooKeeperSecurity;
  /**
   * More zoo.cfg lines, appended after the testkit's own (in a Java properties file the last
   * of two equal keys wins): a test of a configuration as documented. Implies `own`.
   */
  config?: readonly string[];
  /** More JVM flags for a local server (`-Dname=value`). Implies `own`. */
  jvmFlags?: readonly string[];
}

/** Three (or `size`) servers on 127.0.0.1 forming one quorum. */
export interface ZooKeeperEnsemble {
  /** Every member's client address, comma separated. */
  readonly connectString: string;
  /** Every member's TLS client address, comma separated, for an ensemble started with TLS. */
  readonly secureConnectString?: string | undefined;
  readonly members: ZooKeeperServer[];
  /** Index of the current leader (asks each member's `srvr`); waits through an election. */
  leader(): Promise<number>;
  /** Stops one member (SIGKILL by default: a crash). */
  stopMember(index: number, options?: StopOptions): Promise<void>;
  /** Starts a stopped member and waits until it serves again (has joined the quorum). */
  startMember(index: number): Promise<void>;
  /** Waits until a quorum serves requests (every running member reports a mode). */
  waitServing(): Promise<void>;
  /** Stops every member. */
  stop(): Promise<void>;
}

/** Options of `startEnsemble`: size and timing of the servers. */
export interface StartEnsembleOptions {
  /** Number of servers, default 3 (an odd number, at least 3). */
  size?: number;
  /**
   * Run each member on its own host of a namespace network (one per member; their number is
   * the size): its address, its namespace, ZooKeeper's usual ports. A host can then be cut
   * off (`setCut`), splitting the ensemble as a network would.
   */
  hosts?: readonly NetHost[];
  tickTimeMs?: number;
  /** Java heap of each member in MiB (default 256). */
  heapMb?: number;
  /** TLS and SASL of every member (see {@link StartZooKeeperOptions.security}). */
  security?: ZooKeeperSecurity;
}
