import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Acl,
  type Coordinator,
  type CreateOptions,
  type ErrorCode,
  isZoottError,
  type NodeData,
  type Op,
  type OpResult,
  type SessionEvent,
  type SessionListener,
  type SessionState,
  type Stat,
  type Watcher,
  type WatchOptions,
  ZoottError,
} from '@zoott/core';
import {
  baseName,
  codeFromZk,
  FRAME_ALLOWANCE_BYTES,
  type FrameOp,
  joinPath,
  parentPath,
  requestFrameBytes,
  validateAcl,
  validatePath,
} from '@zoott/core/internal';
import { assertClientFixes } from './client-fixes.js';
import {
  CM_STATE,
  EVENT_TYPE,
  type LibClient,
  type LibStat,
  type LibTransaction,
  type LibWatcher,
  lib,
  OP_CODE,
} from './client-lib.js';
import { parseConnectString } from './connect-string.js';
import {
  aclFromLib,
  aclToLib,
  bufferOf,
  dataOf,
  sessionHex,
  statOf,
  toZoottError,
} from './convert.js';
import { boundHandshake } from './handshake.js';
import { installFastJute } from './jute-speed.js';
import { type ResolvedOptions, resolveOptions, type ZkOptions } from './options.js';
import { MARKER_LENGTH, newMarker } from './protected-names.js';
import { describeRefusals, everyHostRefuses, type Refusal } from './refusal-probe.js';
import { installFastWire } from './wire.js';

/** Delay between rounds over all servers while reconnecting. */
const SPIN_DELAY_MS = 200;
/** How long close() waits for the server to confirm the end of the session. */
const CLOSE_WAIT_MS = 3000;

/** A request waiting for its reply; lost sessions and close() reject what is left. */
interface InFlight {
  /** Time (Date.now) after which the call fails with OPERATION_TIMEOUT. */
  deadline: number;
  reject(code: ErrorCode, text: string): void;
}

/** How a call behaves after CONNECTION_LOSS / OPERATION_TIMEOUT. */
type RetryPolicy = 'retry' | 'once';

/** Raw session credentials, for {@link killSession} only. */
export interface SessionCredentials {
  id: Buffer;
  password: Buffer;
}

const credentialsOf = new WeakMap<ZkCoordinator, () => SessionCredentials | null>();

/** @internal Used by killSession: the live session's id and password. */
export function sessionCredentials(client: ZkCoordinator): SessionCredentials | null {
  return credentialsOf.get(client)?.() ?? null;
}

/**
 * A {@link Coordinator} on a real ZooKeeper ensemble, over node-zookeeper-client (patched; see
 * the package README). Create it with {@link connectZk}.
 *
 * On top of the library it adds: a deadline on every call, retries of reads and idempotent
 * writes across connection losses, protected sequential creates, session states that include
 * `lost` when the session timeout passes while disconnected, and ZoottErrors everywhere.
 */
export class ZkCoordinator implements Coordinator {
  readonly connectString: string;
  private readonly opts: ResolvedOptions;
  private client: LibClient | null = null;
  private currentState: SessionState = 'connecting';
  private currentSessionId: string | null = null;
  private negotiatedTimeoutMs: number;
  private readonly listeners = new Set<SessionListener>();
  private readonly inFlight = new Set<InFlight>();
  private readonly stateWaiters = new Set<() => void>();
  private lostTimer: NodeJS.Timeout | null = null;
  /** Fails requests whose reply is overdue; runs only while requests are in flight. */
  private sweeper: NodeJS.Timeout | null = null;
  /** Settles after the last issued call has settled; see ordered(). */
  private tail: Promise<void> = Promise.resolve();
  /** Credentials of this coordinator: the options' plus every addAuth, replayed on renewal. */
  private readonly credentials: Array<{ scheme: string; auth: string }>;
  /** The connect string's chroot ('' for none): the library prepends it to every path sent. */
  private readonly chroot: string;

  /** Use {@link connectZk}; the constructor does not connect. */
  constructor(connectString: string, options: ZkOptions = {}) {
    this.chroot = parseConnectString(connectString).chroot ?? '';
    this.connectString = connectString;
    this.opts = resolveOptions(options);
    this.negotiatedTimeoutMs = this.opts.sessionTimeoutMs;
    this.credentials = [...this.opts.auth];
    credentialsOf.set(this, () =>
      this.client && this.currentState === 'connected'
        ? { id: this.client.getSessionId(), password: this.client.getSessionPassword() }
        : null,
    );
  }

  get sessionId(): string | null {
    return this.currentSessionId;
  }

  get state(): SessionState {
    return this.currentState;
  }

  get sessionTimeoutMs(): number {
    return this.negotiatedTimeoutMs;
  }

  onSession(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---------------------------------------------------------------- session lifecycle

  /** Opens a session and resolves once connected; rejects with CONNECTION_LOSS on timeout. */
  async open(): Promise<void> {
    // Before anything else: never run on a client library without zoott's fixes.
    assertClientFixes();
    this.currentState = 'connecting';
    const client = lib.createClient(this.connectString, {
      sessionTimeout: this.opts.sessionTimeoutMs,
      spinDelay: SPIN_DELAY_MS,
      retries: 0,
    });
    // Before connect(), the library only records credentials; it sends them first thing on
    // every (re)connection.
    for (const c of this.credentials) client.addAuthInfo(c.scheme, Buffer.from(c.auth));
    client.on('state', (s: { name: string }) => this.onLibraryState(client, s.name));
    installFastJute();
    installFastWire(client);
    boundHandshake(client);
    this.client = client;
    client.connect();
    // Every host refusing is known within about a second; only silence needs the timeout.
    const probe = new AbortController();
    const verdict: { refused: Refusal[] | null } = { refused: null };
    void everyHostRefuses(parseConnectString(this.connectString).hosts, probe.signal).then((r) => {
      if (r === null || probe.signal.aborted) return;
      verdict.refused = r;
      for (const wake of [...this.stateWaiters]) wake();
    });
    const ok = await this.waitState(
      (s) => s !== 'connecting' || verdict.refused !== null,
      Date.now() + this.opts.connectTimeoutMs,
    ).finally(() => probe.abort());
    if (!ok || this.state !== 'connected') {
      if (this.client === client) this.client = null;
      abandon(client);
      if (this.currentState === 'connecting') this.currentState = 'lost';
      throw new ZoottError(
        'CONNECTION_LOSS',
        verdict.refused !== null
          ? `could not connect to ${this.connectString}: every server refused the connection: ${describeRefusals(verdict.refused)}`
          : `could not connect to ${this.connectString} within ${this.opts.connectTimeoutMs} ms (no server answered)`,
        { op: 'connect' },
      );
    }
  }

  private onLibraryState(client: LibClient, name: string): void {
    if (client !== this.client || this.currentState === 'closed') return;
    switch (name) {
      case 'SYNC_CONNECTED':
      case 'CONNECTED_READ_ONLY': {
        this.clearLostTimer();
        const previous = this.currentState;
        this.currentSessionId = sessionHex(client.getSessionId());
        this.negotiatedTimeoutMs = client.getSessionTimeout();
        this.setState('connected');
        if (previous === 'connecting') this.emit('connected');
        else if (previous === 'suspended') this.emit('reconnected');
        break;
      }
      case 'DISCONNECTED':
        if (this.currentState === 'connected') {
          this.setState('suspended');
          // The library keeps reconnecting forever and, during a partition, never learns that
          // the server expired the session. As Curator does, call the session lost once a whole
          // session timeout has passed without a connection.
          this.lostTimer = setTimeout(() => {
            this.lostTimer = null;
            if (this.currentState === 'suspended') {
              this.markLost(
                'SESSION_EXPIRED',
                `no connection for the whole session timeout (${this.negotiatedTimeoutMs} ms)`,
              );
            }
          }, this.negotiatedTimeoutMs);
          this.lostTimer.unref();
          this.emit('suspended');
        }
        break;
      case 'EXPIRED':
        this.markLost('SESSION_EXPIRED', 'the server expired the session');
        break;
      case 'AUTH_FAILED':
        this.markLost('AUTH_FAILED', 'the server refused the credentials and ended the session');
        break;
    }
  }

  private markLost(code: ErrorCode, why: string): void {
    if (this.currentState === 'lost' || this.currentState === 'closed') return;
    this.clearLostTimer();
    const client = this.client;
    this.client = null;
    if (client) abandon(client);
    this.currentSessionId = null;
    this.setState('lost');
    this.rejectInFlight(code, `session lost: ${why}`);
    this.emit('lost');
  }

  async renewSession(): Promise<void> {
    if (this.currentState === 'closed') throw this.closedError('renewSession');
    if (this.currentState !== 'lost') return;
    await this.open();
  }

  async close(): Promise<void> {
    if (this.currentState === 'closed') return;
    this.clearLostTimer();
    const client = this.client;
    this.setState('closed');
    if (client) {
      // Requests already sent still get their replies: the server answers them before it
      // processes the close. The library sends closeSession only when connected.
      client.close();
      const deadline = Date.now() + CLOSE_WAIT_MS;
      while (client.connectionManager.state !== CM_STATE.CLOSED && Date.now() < deadline) {
        await sleep(10);
      }
      abandon(client);
    }
    this.client = null;
    this.currentSessionId = null;
    this.rejectInFlight('CLOSED', 'the coordinator was closed before the reply came');
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    this.emit('closed');
  }

  private setState(state: SessionState): void {
    this.currentState = state;
    for (const wake of [...this.stateWaiters]) wake();
  }

  private emit(type: SessionEvent['type']): void {
    const event: SessionEvent = { type, sessionId: this.currentSessionId };
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        // A throwing listener must not break the client's state machine; surface it anyway.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  private clearLostTimer(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = null;
  }

  private rejectInFlight(code: ErrorCode, text: string): void {
    const pending = [...this.inFlight];
    this.inFlight.clear();
    for (const p of pending) p.reject(code, text);
  }

  /** Resolves true once `pred(state)` holds, false at the deadline. */
  private async waitState(pred: (s: SessionState) => boolean, deadline: number): Promise<boolean> {
    while (!pred(this.currentState)) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.stateWaiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.stateWaiters.add(wake);
      });
    }
    return true;
  }

  /**
   * A create of a top-level node fails with NO_NODE only when the chroot itself is missing
   * (the server's root always exists): say so, instead of a bare NO_NODE for `/zoott_p`.
   */
  private namingChroot(err: ZoottError): ZoottError {
    if (err.code !== 'NO_NODE' || this.chroot === '' || err.path === undefined) return err;
    if (!(err.op === 'create' || err.op === 'multi') || parentPath(err.path) !== '/') return err;
    return new ZoottError(
      'NO_NODE',
      `the chroot ${this.chroot} of ${this.connectString} does not exist; create it first (\`zoott init <world>\` does, as does ensureChroot())`,
      { op: err.op, path: err.path, cause: err },
    );
  }

  private closedError(op: string, path?: string): ZoottError {
    return new ZoottError('CLOSED', undefined, { op, path });
  }

  // ---------------------------------------------------------------- request plumbing

  /**
   * Sends one request through the library and waits for its reply, at most requestTimeoutMs.
   * `start` gets the live client and a callback taking the library's (error, result).
   */
  private send<T>(
    op: string,
    path: string | undefined,
    start: (client: LibClient, done: (err: unknown, value?: T) => void) => void,
  ): Promise<T> {
    const details = { op, path };
    if (this.currentState === 'closed') return Promise.reject(this.closedError(op, path));
    const client = this.client;
    if (this.currentState === 'lost' || !client) {
      return Promise.reject(
        new ZoottError('SESSION_EXPIRED', 'the session is lost; call renewSession()', details),
      );
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const entry: InFlight = {
        deadline: Date.now() + this.opts.requestTimeoutMs,
        reject: (code, text) => settle(new ZoottError(code, text, details)),
      };
      const settle = (err: ZoottError | null, value?: T) => {
        if (settled) return;
        settled = true;
        this.inFlight.delete(entry);
        if (err) reject(err);
        else resolve(value as T);
      };
      this.inFlight.add(entry);
      this.armSweeper();
      try {
        start(client, (err, value) => {
          if (err) settle(this.namingChroot(toZoottError(err, details)));
          else settle(null, value);
        });
      } catch (err) {
        // The library validates some arguments with synchronous assertions.
        settle(toZoottError(err, details));
      }
    });
  }

  /**
   * One timer for the deadlines of all requests, instead of a timer per request (which cost
   * a noticeable share of a pipelined load). Every request has the same timeout, so the set
   * (insertion order) is ordered by deadline: a sweep stops at the first one still in time.
   */
  private armSweeper(): void {
    if (this.sweeper) return;
    const period = Math.max(5, Math.min(250, Math.floor(this.opts.requestTimeoutMs / 20)));
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const entry of this.inFlight) {
        if (entry.deadline > now) break;
        entry.reject(
          'OPERATION_TIMEOUT',
          `no reply within ${this.opts.requestTimeoutMs} ms; the outcome is unknown`,
        );
      }
      if (this.inFlight.size === 0 && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = null;
      }
    }, period);
    this.sweeper.unref();
  }

  /**
   * Runs `attempt` and, for retryable failures (connection loss, no reply in time) under the
   * `retry` policy, again after a backoff and once connected, until maxAttempts or deadlineMs.
   */
  private async withRetry<T>(policy: RetryPolicy, attempt: (n: number) => Promise<T>): Promise<T> {
    const { maxAttempts, baseDelayMs, deadlineMs } = this.opts.retry;
    const deadline = Date.now() + deadlineMs;
    for (let n = 1; ; n++) {
      try {
        return await attempt(n);
      } catch (err) {
        const retryable = isZoottError(err) && err.retryable;
        if (policy === 'once' || !retryable || n >= maxAttempts || Date.now() >= deadline) {
          throw err;
        }
        const backoff = Math.min(baseDelayMs * 2 ** (n - 1), 1000) * (0.5 + Math.random() / 2);
        await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
        await this.waitState((s) => s !== 'suspended' && s !== 'connecting', deadline);
      }
    }
  }

  private checkPath(path: string, op: string): void {
    validatePath(path, op);
    this.checkFrame([{ op: 'read', path }], false, op, path);
  }

  /**
   * Refuses a request whose frame would not fit the server's buffer (`jute.maxbuffer`, which
   * the default `maxDataBytes` + FRAME_ALLOWANCE_BYTES equals): ZooKeeper does not answer such
   * a frame, it drops the connection, so sending it would cost every other request on the
   * connection. The size is exact: paths with the chroot, data, ACLs and headers.
   */
  private checkFrame(ops: FrameOp[], asMulti: boolean, op: string, path?: string): void {
    const sent = this.chroot
      ? ops.map((o) => ({ ...o, path: o.path === '/' ? this.chroot : this.chroot + o.path }))
      : ops;
    const size = requestFrameBytes(sent, asMulti);
    const limit = this.opts.maxDataBytes + FRAME_ALLOWANCE_BYTES;
    if (size <= limit) return;
    const data = ops.reduce((n, o) => n + (o.dataBytes ?? 0), 0);
    throw new ZoottError(
      'BAD_ARGUMENTS',
      `request of ${size} bytes (data ${data}, the rest paths, ACLs and headers) exceeds the limit of ${limit} (maxDataBytes ${this.opts.maxDataBytes} + ${FRAME_ALLOWANCE_BYTES})`,
      { op, ...(path !== undefined && path.length <= 200 ? { path } : {}) },
    );
  }

  /** Checks a write's data against `maxDataBytes`; the whole request is checked by the caller. */
  private checkData(data: unknown, op: string, path: string): Buffer | null {
    if (data === null || data === undefined) return null;
    if (!(data instanceof Uint8Array)) {
      throw new ZoottError('BAD_ARGUMENTS', 'data must be a Uint8Array (or null for no data)', {
        op,
        path,
      });
    }
    if (data.byteLength > this.opts.maxDataBytes) {
      throw new ZoottError(
        'DATA_TOO_LARGE',
        `${data.byteLength} bytes exceed the limit of ${this.opts.maxDataBytes}`,
        { op, path },
      );
    }
    return bufferOf(data);
  }

  private checkVersion(version: unknown, op: string, path: string): number {
    if (version === undefined) return -1;
    if (typeof version !== 'number' || !Number.isInteger(version) || version < -1) {
      throw new ZoottError(
        'BAD_ARGUMENTS',
        `version must be an integer >= -1, got ${JSON.stringify(version)}`,
        { op, path },
      );
    }
    return version;
  }

  private wrapWatch(watch: Watcher | undefined): LibWatcher | undefined {
    if (watch === undefined) return undefined;
    if (typeof watch !== 'function') {
      throw new ZoottError('BAD_ARGUMENTS', 'watch must be a function');
    }
    return (event) => {
      const type = EVENT_TYPE[event.type as keyof typeof EVENT_TYPE];
      if (!type) return;
      try {
        watch({ type, path: event.path });
      } catch (err) {
        // Thrown inside the library's socket handler it would corrupt its parsing state.
        queueMicrotask(() => {
          throw err;
        });
      }
    };
  }

  /**
   * Starts `run` at once but settles its promise only after every call issued before it has
   * settled: the contract's FIFO order, whatever number of internal steps (retries, lookups)
   * each call took.
   */
  private ordered<T>(run: () => Promise<T>): Promise<T> {
    const result = run();
    // Handled here so an early rejection is not reported as unhandled while it waits its turn.
    result.catch(() => {});
    const inOrder = this.tail.then(() => result);
    this.tail = inOrder.then(
      () => {},
      () => {},
    );
    return inOrder;
  }

  // ---------------------------------------------------------------- Coordinator

  create(path: string, data?: Uint8Array, options: CreateOptions = {}): Promise<string> {
    return this.ordered(() => this.createNow(path, data, options));
  }

  get(path: string, options: WatchOptions = {}): Promise<NodeData> {
    return this.ordered(() => this.getNow(path, options));
  }

  set(path: string, data: Uint8Array, version?: number): Promise<Stat> {
    return this.ordered(() => this.setNow(path, data, version));
  }

  delete(path: string, version?: number): Promise<void> {
    return this.ordered(() => this.deleteNow(path, version));
  }

  exists(path: string, options: WatchOptions = {}): Promise<Stat | null> {
    return this.ordered(() => this.existsNow(path, options));
  }

  multi(ops: readonly Op[]): Promise<OpResult[]> {
    return this.ordered(() => this.multiNow(ops));
  }

  getAcl(path: string): Promise<{ acl: Acl[]; stat: Stat }> {
    return this.ordered(() => this.getAclNow(path));
  }

  setAcl(path: string, acl: readonly Acl[], version?: number): Promise<Stat> {
    return this.ordered(() => this.setAclNow(path, acl, version));
  }

  addAuth(scheme: string, auth: string): Promise<void> {
    return this.ordered(() => this.addAuthNow(scheme, auth));
  }

  children(path: string, options: WatchOptions = {}): Promise<string[]> {
    return this.ordered(async () => (await this.listChildren('children', path, options)).children);
  }

  childrenWithStat(
    path: string,
    options: WatchOptions = {},
  ): Promise<{ children: string[]; stat: Stat }> {
    return this.ordered(() => this.listChildren('childrenWithStat', path, options));
  }

  private async createNow(
    path: string,
    data?: Uint8Array,
    options: CreateOptions = {},
  ): Promise<string> {
    this.checkPath(path, 'create');
    const buffer = this.checkData(data, 'create', path);
    const acl = options.acl ?? this.opts.defaultAcl;
    validateAcl(acl, path);
    const libAcl = aclToLib(acl);
    const ephemeral = options.ephemeral === true;
    const sequential = options.sequential === true;
    // A protected sequential create sends its path with a marker of MARKER_LENGTH bytes.
    const sentPath =
      sequential && this.opts.protectSequential ? path + '_'.repeat(MARKER_LENGTH) : path;
    const dataBytes = buffer?.byteLength ?? 0;
    this.checkFrame([{ op: 'create', path: sentPath, dataBytes, acl }], false, 'create', path);
    const mode =
      (ephemeral ? lib.CreateMode.EPHEMERAL : lib.CreateMode.PERSISTENT) + (sequential ? 2 : 0);
    const createOnce = (target: string) =>
      this.send<string>('create', path, (c, done) => c.create(target, buffer, libAcl, mode, done));

    if (sequential) {
      if (!this.opts.protectSequential) return this.withRetry('once', () => createOnce(path));
      const requested = path + newMarker();
      const prefix = baseName(requested);
      return this.withRetry('retry', async (n) => {
        if (n > 1) {
          // The previous attempt's reply was lost: the node may exist. Its marker finds it.
          const siblings = await this.send<string[]>('create', path, (c, done) =>
            c.getChildren(parentPath(requested), undefined, done),
          );
          const mine = siblings.find((name) => name.startsWith(prefix));
          if (mine) return joinPath(parentPath(requested), mine);
        }
        return createOnce(requested);
      });
    }

    return this.withRetry('retry', async (n) => {
      try {
        return await createOnce(path);
      } catch (err) {
        if (n === 1 || !isZoottError(err, 'NODE_EXISTS')) throw err;
        // A retry found the node: made by our lost first attempt, or by someone else.
        if (ephemeral) {
          const stat = await this.send<Stat | null>('create', path, (c, done) =>
            c.exists(path, undefined, (e, s) => done(e, s ? statOf(s) : null)),
          );
          if (stat && stat.ephemeralOwner !== null && stat.ephemeralOwner === this.sessionId) {
            return path;
          }
          throw err;
        }
        throw new ZoottError(
          'CONNECTION_LOSS',
          'the reply was lost and the node exists now; whether this call created it is unknown',
          { op: 'create', path, cause: err },
        );
      }
    });
  }

  private async getNow(path: string, options: WatchOptions = {}): Promise<NodeData> {
    this.checkPath(path, 'get');
    const watcher = this.wrapWatch(options.watch);
    return this.withRetry('retry', () =>
      this.send<NodeData>('get', path, (c, done) =>
        c.getData(path, watcher, (err, data, stat) =>
          err ? done(err) : done(null, { data: dataOf(data), stat: statOf(stat) }),
        ),
      ),
    );
  }

  private async setNow(path: string, data: Uint8Array, version?: number): Promise<Stat> {
    this.checkPath(path, 'set');
    const buffer = this.checkData(data, 'set', path);
    const v = this.checkVersion(version, 'set', path);
    this.checkFrame([{ op: 'set', path, dataBytes: buffer?.byteLength ?? 0 }], false, 'set', path);
    // With an expected version a retry could report BAD_VERSION for our own lost write.
    return this.withRetry(v === -1 ? 'retry' : 'once', () =>
      this.send<Stat>('set', path, (c, done) =>
        c.setData(path, buffer, v, (err, stat) => (err ? done(err) : done(null, statOf(stat)))),
      ),
    );
  }

  private async deleteNow(path: string, version?: number): Promise<void> {
    this.checkPath(path, 'delete');
    const v = this.checkVersion(version, 'delete', path);
    return this.withRetry(v === -1 ? 'retry' : 'once', async (n) => {
      try {
        await this.send<void>('delete', path, (c, done) => c.remove(path, v, (err) => done(err)));
      } catch (err) {
        if (n > 1 && isZoottError(err, 'NO_NODE')) {
          throw new ZoottError(
            'CONNECTION_LOSS',
            'the reply was lost and the node is gone now; whether this call deleted it is unknown',
            { op: 'delete', path, cause: err },
          );
        }
        throw err;
      }
    });
  }

  private async existsNow(path: string, options: WatchOptions = {}): Promise<Stat | null> {
    this.checkPath(path, 'exists');
    const watcher = this.wrapWatch(options.watch);
    return this.withRetry('retry', () =>
      this.send<Stat | null>('exists', path, (c, done) =>
        c.exists(path, watcher, (err, stat) =>
          err ? done(err) : done(null, stat ? statOf(stat) : null),
        ),
      ),
    );
  }

  private async listChildren(
    op: string,
    path: string,
    options: WatchOptions,
  ): Promise<{ children: string[]; stat: Stat }> {
    this.checkPath(path, op);
    const watcher = this.wrapWatch(options.watch);
    return this.withRetry('retry', () =>
      this.send<{ children: string[]; stat: Stat }>(op, path, (c, done) =>
        c.getChildren(path, watcher, (err, children, stat) =>
          err ? done(err) : done(null, { children: children ?? [], stat: statOf(stat) }),
        ),
      ),
    );
  }

  private async multiNow(ops: readonly Op[]): Promise<OpResult[]> {
    if (!Array.isArray(ops)) {
      throw new ZoottError('BAD_ARGUMENTS', 'multi takes an array of ops', { op: 'multi' });
    }
    const build = (tx: LibTransaction) => {
      ops.forEach((o, i) => {
        const where = `op ${i}`;
        if (typeof o?.path !== 'string') {
          throw new ZoottError('BAD_ARGUMENTS', `${where}: path must be a string`, {
            op: 'multi',
            opIndex: i,
          });
        }
        validatePath(o.path, 'multi');
        switch (o.op) {
          case 'create': {
            const acl = o.acl ?? this.opts.defaultAcl;
            validateAcl(acl, o.path);
            const mode =
              (o.ephemeral ? lib.CreateMode.EPHEMERAL : lib.CreateMode.PERSISTENT) +
              (o.sequential ? 2 : 0);
            tx.create(o.path, this.checkData(o.data, 'multi', o.path), aclToLib(acl), mode);
            break;
          }
          case 'set':
            tx.setData(
              o.path,
              this.checkData(o.data, 'multi', o.path),
              this.checkVersion(o.version, 'multi', o.path),
            );
            break;
          case 'delete':
            tx.remove(o.path, this.checkVersion(o.version, 'multi', o.path));
            break;
          case 'check':
            tx.check(o.path, this.checkVersion(o.version, 'multi', o.path));
            break;
          default:
            throw new ZoottError(
              'BAD_ARGUMENTS',
              `${where}: unknown op ${JSON.stringify((o as { op: unknown }).op)}`,
              { op: 'multi', opIndex: i },
            );
        }
      });
    };
    const dataOf = (o: Op | null | undefined) =>
      typeof o === 'object' && o !== null && 'data' in o && o.data instanceof Uint8Array
        ? o.data.byteLength
        : 0;
    const total = ops.reduce((sum, o) => sum + dataOf(o), 0);
    if (total > this.opts.maxDataBytes) {
      throw new ZoottError(
        'DATA_TOO_LARGE',
        `the ops carry ${total} bytes together, over the limit of ${this.opts.maxDataBytes}`,
        { op: 'multi' },
      );
    }
    // Validate every op before anything is sent, so bad input is reported as such.
    build(fakeTransaction());
    const frame = ops.map(
      (o): FrameOp => ({
        op: o.op,
        path: o.path,
        dataBytes: dataOf(o),
        ...(o.op === 'create' ? { acl: o.acl ?? this.opts.defaultAcl } : {}),
      }),
    );
    this.checkFrame(frame, true, 'multi');
    type Raw = Array<{ type: number; path?: string; stat?: LibStat; err?: number }>;
    const raw = await this.send<Raw>('multi', undefined, (c, done) => {
      const tx = c.transaction();
      build(tx);
      tx.commit((err, results) => {
        // A failed multi comes back as per-op error results; the library turns the first
        // non-zero one into `err`. Keep the results to report every op's code.
        if (err && Array.isArray(results) && results.some((r) => r.type === OP_CODE.ERROR)) {
          done(null, results);
        } else done(err, results);
      });
    });
    const failed = raw.findIndex((r) => r.type === OP_CODE.ERROR && r.err !== 0 && r.err !== -2);
    if (failed !== -1 || raw.some((r) => r.type === OP_CODE.ERROR)) {
      const index = failed === -1 ? 0 : failed;
      const plain = toZoottError(
        { code: raw[index]?.err ?? -2, name: 'multi' },
        { op: 'multi', path: ops[index]?.path },
      );
      const failure = this.namingChroot(plain);
      // As ZooKeeper answers: ops before the failing one 0 (null here), the failing op its
      // code, later ones RUNTIME_INCONSISTENCY (never evaluated).
      const opCodes = raw.map((r, i) =>
        i === index ? failure.code : !r.err ? null : codeFromZk(r.err),
      );
      const why = failure === plain ? '' : `: ${failure.message}`;
      throw new ZoottError(failure.code, `op ${index} (${ops[index]?.op}) failed${why}`, {
        op: 'multi',
        path: ops[index]?.path,
        opIndex: index,
        opCodes,
        cause: failure,
      });
    }
    return raw.map((r): OpResult => {
      switch (r.type) {
        case OP_CODE.CREATE:
          return { op: 'create', path: r.path ?? '' };
        case OP_CODE.SET_DATA:
          return { op: 'set', stat: statOf(r.stat!) };
        case OP_CODE.DELETE:
          return { op: 'delete' };
        default:
          return { op: 'check' };
      }
    });
  }

  private async getAclNow(path: string): Promise<{ acl: Acl[]; stat: Stat }> {
    this.checkPath(path, 'getAcl');
    return this.withRetry('retry', () =>
      this.send<{ acl: Acl[]; stat: Stat }>('getAcl', path, (c, done) =>
        c.getACL(path, (err, acl, stat) =>
          err ? done(err) : done(null, { acl: aclFromLib(acl), stat: statOf(stat) }),
        ),
      ),
    );
  }

  private async setAclNow(path: string, acl: readonly Acl[], version?: number): Promise<Stat> {
    this.checkPath(path, 'setAcl');
    validateAcl(acl, path);
    const v = this.checkVersion(version, 'setAcl', path);
    const libAcl = aclToLib(acl);
    return this.withRetry(v === -1 ? 'retry' : 'once', () =>
      this.send<Stat>('setAcl', path, (c, done) =>
        c.setACL(path, libAcl, v, (err, stat) => (err ? done(err) : done(null, statOf(stat)))),
      ),
    );
  }

  private async addAuthNow(scheme: string, auth: string): Promise<void> {
    if (typeof scheme !== 'string' || scheme === '' || typeof auth !== 'string') {
      throw new ZoottError('BAD_ARGUMENTS', 'addAuth needs a non-empty scheme and an auth string', {
        op: 'addAuth',
      });
    }
    if (this.currentState === 'closed') throw this.closedError('addAuth');
    if (this.currentState === 'lost' || !this.client) {
      throw new ZoottError('SESSION_EXPIRED', 'the session is lost; call renewSession()', {
        op: 'addAuth',
      });
    }
    this.credentials.push({ scheme, auth });
    this.client.addAuthInfo(scheme, Buffer.from(auth));
    // The library sends auth packets without waiting for an answer. The server handles a
    // session's packets in order, so once a later request returns, the auth was applied (or
    // refused: then the server ends the session and this request fails with AUTH_FAILED).
    await this.withRetry('retry', () =>
      this.send<void>('addAuth', undefined, (c, done) =>
        c.exists('/', undefined, (err) => done(err)),
      ),
    );
  }
}

/** Stops a library client for good: no closeSession, no reconnect attempts. */
function abandon(client: LibClient): void {
  client.removeAllListeners('state');
  if (client.connectionManager.state !== CM_STATE.CLOSED) client.close();
  client.connectionManager.socket?.destroy();
}

/** Runs the multi op checks without a live client. */
function fakeTransaction(): LibTransaction {
  const tx: LibTransaction = {
    create: () => tx,
    check: () => tx,
    setData: () => tx,
    remove: () => tx,
    commit: () => {},
  };
  return tx;
}
