import { type Acl, OPEN_ACL, ZoottError } from '@zoott/core';
import { DEFAULT_MAX_DATA_BYTES, validatePath } from '@zoott/core/internal';
import { type Clock, systemClock } from './clock.js';
import { MemoryCoordinator } from './coordinator.js';
import { ServerState } from './server-state.js';

/**
 * The data limit, by default the ZooKeeper adapter's (1047552: ZooKeeper's `jute.maxbuffer`
 * less 1 KiB for paths, ACLs and headers), so what fits here fits on ZooKeeper too.
 */
export { DEFAULT_MAX_DATA_BYTES };
/** Session timeout of a `connect()` that does not ask for one (10 s, ZooKeeper's usual). */
export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;

/** Options of a `MemoryServer`: its size limit, clock and defaults. */
export interface MemoryServerOptions {
  /** Largest node data accepted; one byte more fails DATA_TOO_LARGE. Default 1047552. */
  maxDataBytes?: number;
  /**
   * Time source for ctime/mtime and, when given, timers for session expiry. Without a clock
   * the server reads `Date.now()` and never schedules a timer: sessions then end only by
   * `close()` or `expireSession()`. Pass `systemClock` for real timers, a `ManualClock` to
   * move time by hand.
   */
  clock?: Clock;
  /** Session timeout for clients that do not ask for one. Default 10000 ms. */
  defaultSessionTimeoutMs?: number;
}

/** Options of `MemoryServer.connect()`: chroot, session timeout, credentials. */
export interface MemoryConnectOptions {
  /** Namespace: every path is taken relative to it. Like ZooKeeper, the node must exist. */
  chroot?: string;
  sessionTimeoutMs?: number;
  /** Credentials added to the session when it opens (and again on `renewSession()`). */
  auth?: Array<{ scheme: string; auth: string }>;
  /** ACL for creates that do not pass one. Default `OPEN_ACL`. */
  defaultAcl?: readonly Acl[];
}

function positive(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new ZoottError('INVALID_CONFIG', `${field} must be a positive number, got ${value}`, {
      field,
    });
  }
  return value;
}

/**
 * One in-memory ZooKeeper: a single tree that any number of client sessions share, so a test
 * can run several "processes" against it. Separate servers share nothing.
 */
export class MemoryServer {
  private readonly state: ServerState;

  constructor(options: MemoryServerOptions = {}) {
    const maxDataBytes = positive(options.maxDataBytes, DEFAULT_MAX_DATA_BYTES, 'maxDataBytes');
    if (!Number.isInteger(maxDataBytes)) {
      throw new ZoottError(
        'INVALID_CONFIG',
        `maxDataBytes must be an integer, got ${maxDataBytes}`,
        {
          field: 'maxDataBytes',
        },
      );
    }
    this.state = new ServerState({
      maxDataBytes,
      clock: options.clock ?? systemClock,
      timers: options.clock !== undefined,
      defaultSessionTimeoutMs: positive(
        options.defaultSessionTimeoutMs,
        DEFAULT_SESSION_TIMEOUT_MS,
        'defaultSessionTimeoutMs',
      ),
    });
  }

  /** The data size limit this server enforces. */
  get maxDataBytes(): number {
    return this.state.options.maxDataBytes;
  }

  /** Ids of the sessions alive on the server, oldest first. */
  get sessionIds(): string[] {
    return [...this.state.sessions.keys()];
  }

  /** Opens a new client session. Rejects with AUTH_FAILED for unusable credentials. */
  async connect(options: MemoryConnectOptions = {}): Promise<MemoryCoordinator> {
    let chroot = '';
    if (options.chroot !== undefined && options.chroot !== '/') {
      validatePath(options.chroot, 'connect');
      chroot = options.chroot;
    }
    const client = new MemoryCoordinator(this.state, {
      chroot,
      sessionTimeoutMs: positive(
        options.sessionTimeoutMs,
        this.state.options.defaultSessionTimeoutMs,
        'sessionTimeoutMs',
      ),
      auth: [...(options.auth ?? [])],
      defaultAcl: options.defaultAcl ?? OPEN_ACL,
    });
    client.open();
    return client;
  }

  /**
   * Ends a session from the server side, as when ZooKeeper stops hearing from a client: its
   * ephemerals are deleted (other clients' watches fire) and its client sees `lost` — at once
   * if connected, otherwise when it reconnects or its own session timer runs out. Ids of
   * sessions that already ended are ignored.
   */
  expireSession(sessionId: string): void {
    const session = this.state.sessions.get(sessionId);
    if (session) this.state.expire(session);
  }
}
