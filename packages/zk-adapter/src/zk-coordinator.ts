import {
  type Acl,
  type Coordinator,
  type CreateOptions,
  isZoottError,
  type NodeData,
  type Op,
  type OpResult,
  type SessionListener,
  type SessionState,
  type Stat,
  type TreeListener,
  type Watcher,
  type WatchOptions,
  ZoottError,
} from '@zoott/core';
import {
  baseName,
  checkData,
  checkFrame,
  checkMulti,
  checkRequestPath,
  checkVersion,
  joinPath,
  parentPath,
  type RequestLimits,
  validateAcl,
} from '@zoott/core/internal';
import { parseConnectString } from './connect-string.js';
import { aclFromLib, aclToLib, bufferOf, dataOf, statOf } from './convert.js';
import { type ResolvedOptions, resolveOptions, type ZkOptions } from './options.js';
import { MARKER_LENGTH, newMarker } from './protected-names.js';
import { RequestPipeline } from './request-pipeline.js';
import type { ResolvedTls } from './security-options.js';
import { ZkSession } from './session.js';
import { EVENT_TYPE, type LibWatcher } from './zk-wire/client-lib.js';
import { exists, getData } from './zk-wire/direct-reads.js';
import { commitMulti, createMode, decodeMultiReply, type MultiReply } from './zk-wire/multi.js';
import { TreeWatches } from './zk-wire/tree-watches.js';
import { type ConnectionIdentity, sendWhoAmI } from './zk-wire/who-am-i.js';

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

const tlsOf = new WeakMap<ZkCoordinator, ResolvedTls | null>();

/** @internal Used by killSession: the client's TLS, so its raw connection reaches the same port. */
export function sessionTls(client: ZkCoordinator): ResolvedTls | null {
  return tlsOf.get(client) ?? null;
}

/**
 * A {@link Coordinator} on a real ZooKeeper ensemble, over node-zookeeper-client (patched; see
 * the package README). Create it with {@link connectZk}.
 *
 * On top of the library it adds: a deadline on every call, retries of reads and idempotent
 * writes across connection losses, protected sequential creates, session states that include
 * `lost` when the session timeout passes while disconnected, and ZoottErrors everywhere. The
 * session lives in {@link ZkSession}, the way requests travel in {@link RequestPipeline}; this
 * class checks each call's input and says what each call sends.
 */
export class ZkCoordinator implements Coordinator {
  readonly connectString: string;
  private readonly opts: ResolvedOptions;
  private readonly session: ZkSession;
  private readonly pipeline: RequestPipeline;
  /** The connect string's chroot ('' for none): the library prepends it to every path sent. */
  private readonly chroot: string;
  /** What the shared request checks measure against. */
  private readonly limits: RequestLimits;
  private readonly trees: TreeWatches;

  /** Use {@link connectZk}; the constructor does not connect. */
  constructor(connectString: string, options: ZkOptions = {}) {
    this.chroot = parseConnectString(connectString).chroot ?? '';
    this.connectString = connectString;
    this.opts = resolveOptions(options);
    this.limits = { maxDataBytes: this.opts.maxDataBytes, chroot: this.chroot };
    this.session = new ZkSession(connectString, this.opts, (code, text) =>
      this.pipeline.rejectAll(code, text),
    );
    this.pipeline = new RequestPipeline(this.session, this.opts, (err) => this.namingChroot(err));
    this.trees = new TreeWatches(this.pipeline);
    // A connection's watches die with it; tree watches are added again on the next one.
    this.session.onSession(({ type }) => {
      if (type === 'suspended' || type === 'lost') this.trees.disconnected();
      else if (type === 'reconnected' || type === 'connected') this.trees.connected();
      else if (type === 'closed') this.trees.clear();
    });
    tlsOf.set(this, this.opts.tls);
    credentialsOf.set(this, () => {
      const client = this.session.client;
      // Suspended, the session lives on at the server under the same id and password.
      const state = this.session.state;
      return client && (state === 'connected' || state === 'suspended')
        ? { id: client.getSessionId(), password: client.getSessionPassword() }
        : null;
    });
  }

  get sessionId(): string | null {
    return this.session.sessionId;
  }

  get state(): SessionState {
    return this.session.state;
  }

  get sessionTimeoutMs(): number {
    return this.session.timeoutMs;
  }

  /**
   * Wall time (ms since the epoch) the server was last heard from: a reply, the answer to a
   * keep-alive ping, a notification; `null` before the first. It needs no request: a process
   * can tell how long ZooKeeper has been silent without waiting on it.
   */
  get lastReplyAt(): number | null {
    return this.session.lastReplyAt;
  }

  onSession(listener: SessionListener): () => void {
    return this.session.onSession(listener);
  }

  /** Opens a session and resolves once connected; rejects with CONNECTION_LOSS on timeout. */
  open(): Promise<void> {
    return this.session.open();
  }

  renewSession(): Promise<void> {
    return this.session.renew();
  }

  close(): Promise<void> {
    return this.session.close();
  }

  // ---------------------------------------------------------------- Coordinator

  create(path: string, data?: Uint8Array, options: CreateOptions = {}): Promise<string> {
    return this.pipeline.ordered(() => this.createNow(path, data, options));
  }

  get(path: string, options?: WatchOptions): Promise<NodeData> {
    // A worker reads one entry per task: no closure, no options object, no async layer.
    return this.pipeline.inOrder(this.getNow(path, options?.watch));
  }

  set(path: string, data: Uint8Array, version?: number): Promise<Stat> {
    return this.pipeline.ordered(() => this.setNow(path, data, version));
  }

  delete(path: string, version?: number): Promise<void> {
    return this.pipeline.ordered(() => this.deleteNow(path, version));
  }

  exists(path: string, options: WatchOptions = {}): Promise<Stat | null> {
    return this.pipeline.ordered(() => this.existsNow(path, options));
  }

  multi(ops: readonly Op[]): Promise<OpResult[]> {
    return this.pipeline.ordered(() => this.multiNow(ops));
  }

  getAcl(path: string): Promise<{ acl: Acl[]; stat: Stat }> {
    return this.pipeline.ordered(() => this.getAclNow(path));
  }

  setAcl(path: string, acl: readonly Acl[], version?: number): Promise<Stat> {
    return this.pipeline.ordered(() => this.setAclNow(path, acl, version));
  }

  addAuth(scheme: string, auth: string): Promise<void> {
    return this.pipeline.ordered(() => this.addAuthNow(scheme, auth));
  }

  children(path: string, options: WatchOptions = {}): Promise<string[]> {
    return this.pipeline.ordered(
      async () => (await this.listChildren('children', path, options)).children,
    );
  }

  childrenWithStat(
    path: string,
    options: WatchOptions = {},
  ): Promise<{ children: string[]; stat: Stat }> {
    return this.pipeline.ordered(() => this.listChildren('childrenWithStat', path, options));
  }

  watchTree(path: string, listener: TreeListener): Promise<() => void> {
    return this.pipeline.ordered(async () => {
      checkRequestPath(path, 'watchTree', this.limits);
      if (typeof listener !== 'function') {
        throw new ZoottError('BAD_ARGUMENTS', 'listener must be a function', {
          op: 'watchTree',
          path,
        });
      }
      return await this.trees.add(path, listener);
    });
  }

  /**
   * The identities the server holds for this session's connection (ZooKeeper 3.7+ `whoAmI`):
   * `{ scheme: 'x509', id: 'CN=...' }` for a client certificate the server maps, `sasl` for a
   * SASL login, `digest` for addAuth users (the user name), `ip` for the address. What an ACL
   * must name to admit this session. A server before 3.7 fails it with UNIMPLEMENTED.
   */
  whoAmI(): Promise<ConnectionIdentity[]> {
    return this.pipeline.ordered(() =>
      this.pipeline.withRetry('retry', () =>
        this.pipeline.send<ConnectionIdentity[]>('whoAmI', undefined, (client, done) =>
          sendWhoAmI(client, done),
        ),
      ),
    );
  }

  // ---------------------------------------------------------------- what each call sends

  private async createNow(
    path: string,
    data?: Uint8Array,
    options: CreateOptions = {},
  ): Promise<string> {
    checkRequestPath(path, 'create', this.limits);
    const buffer = bufferOf(checkData(data, 'create', path, this.opts.maxDataBytes));
    const acl = options.acl ?? this.opts.defaultAcl;
    validateAcl(acl, path);
    const libAcl = aclToLib(acl);
    const ephemeral = options.ephemeral === true;
    const sequential = options.sequential === true;
    // A protected sequential create sends its path with a marker of MARKER_LENGTH bytes.
    const sentPath =
      sequential && this.opts.protectSequential ? path + '_'.repeat(MARKER_LENGTH) : path;
    const dataBytes = buffer?.byteLength ?? 0;
    checkFrame(
      [{ op: 'create', path: sentPath, dataBytes, acl }],
      false,
      this.limits,
      'create',
      path,
    );
    const mode = createMode(ephemeral, sequential);
    const createOnce = (target: string) =>
      this.pipeline.send<string>('create', path, (client, done) =>
        client.create(target, buffer, libAcl, mode, done),
      );
    if (sequential) {
      if (!this.opts.protectSequential) {
        return this.pipeline.withRetry('once', () => createOnce(path));
      }
      return this.createProtected(path, createOnce);
    }
    return this.pipeline.withRetry('retry', async (attemptNo) => {
      try {
        return await createOnce(path);
      } catch (err) {
        if (attemptNo === 1 || !isZoottError(err, 'NODE_EXISTS')) throw err;
        // A retry found the node: made by our lost first attempt, or by someone else.
        if (ephemeral && (await this.ownsEphemeral(path))) return path;
        if (ephemeral) throw err;
        throw new ZoottError(
          'CONNECTION_LOSS',
          'the reply was lost and the node exists now; whether this call created it is unknown',
          { op: 'create', path, cause: err },
        );
      }
    });
  }

  /**
   * A sequential create whose name carries a random marker: when a reply is lost, the retry
   * lists the parent and finds the node the lost attempt made, instead of making a second one.
   */
  private createProtected(
    path: string,
    createOnce: (target: string) => Promise<string>,
  ): Promise<string> {
    const requested = path + newMarker();
    const prefix = baseName(requested);
    return this.pipeline.withRetry('retry', async (attemptNo) => {
      if (attemptNo > 1) {
        const siblings = await this.pipeline.send<string[]>('create', path, (client, done) =>
          client.getChildren(parentPath(requested), undefined, done),
        );
        const mine = siblings.find((name) => name.startsWith(prefix));
        if (mine) return joinPath(parentPath(requested), mine);
      }
      return createOnce(requested);
    });
  }

  /** Whether `path` is an ephemeral of this very session (a retried create that did land). */
  private async ownsEphemeral(path: string): Promise<boolean> {
    const stat = await this.pipeline.send<Stat | null>('create', path, (client, done) =>
      client.exists(path, undefined, (e, s) => done(e, s ? statOf(s) : null)),
    );
    return stat !== null && stat.ephemeralOwner !== null && stat.ephemeralOwner === this.sessionId;
  }

  /** Not async (a promise and a turn per read): a bad argument is returned as a rejection. */
  private getNow(path: string, watch: Watcher | undefined): Promise<NodeData> {
    let watcher: LibWatcher | undefined;
    try {
      checkRequestPath(path, 'get', this.limits);
      watcher = this.wrapWatch(watch);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.pipeline.withRetry('retry', () =>
      this.pipeline.send<NodeData>('get', path, (client, done) =>
        getData(client, path, watcher, (err, data, stat) =>
          err ? done(err) : done(null, { data: dataOf(data), stat: statOf(stat!) }),
        ),
      ),
    );
  }

  private async setNow(path: string, data: Uint8Array, version?: number): Promise<Stat> {
    checkRequestPath(path, 'set', this.limits);
    const buffer = bufferOf(checkData(data, 'set', path, this.opts.maxDataBytes));
    const expected = checkVersion(version, 'set', path);
    const frame = { op: 'set', path, dataBytes: buffer?.byteLength ?? 0 } as const;
    checkFrame([frame], false, this.limits, 'set', path);
    // With an expected version a retry could report BAD_VERSION for our own lost write.
    return await this.pipeline.withRetry(expected === -1 ? 'retry' : 'once', () =>
      this.pipeline.send<Stat>('set', path, (client, done) =>
        client.setData(path, buffer, expected, (err, stat) =>
          err ? done(err) : done(null, statOf(stat)),
        ),
      ),
    );
  }

  private async deleteNow(path: string, version?: number): Promise<void> {
    checkRequestPath(path, 'delete', this.limits);
    const expected = checkVersion(version, 'delete', path);
    return await this.pipeline.withRetry(expected === -1 ? 'retry' : 'once', async (attemptNo) => {
      try {
        await this.pipeline.send<void>('delete', path, (client, done) =>
          client.remove(path, expected, (err) => done(err)),
        );
      } catch (err) {
        if (attemptNo > 1 && isZoottError(err, 'NO_NODE')) {
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
    checkRequestPath(path, 'exists', this.limits);
    const watcher = this.wrapWatch(options.watch);
    // `return await` (here and below): an async function returning a promise unawaited
    // settles through an extra thenable job and promise, on every request.
    return await this.pipeline.withRetry('retry', () =>
      this.pipeline.send<Stat | null>('exists', path, (client, done) =>
        exists(client, path, watcher, (err, stat) =>
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
    checkRequestPath(path, op, this.limits);
    const watcher = this.wrapWatch(options.watch);
    return await this.pipeline.withRetry('retry', () =>
      this.pipeline.send<{ children: string[]; stat: Stat }>(op, path, (client, done) =>
        client.getChildren(path, watcher, (err, children, stat) =>
          err ? done(err) : done(null, { children: children ?? [], stat: statOf(stat) }),
        ),
      ),
    );
  }

  private async multiNow(ops: readonly Op[]): Promise<OpResult[]> {
    // Every op is checked before anything is sent, so bad input is reported as such.
    const checked = checkMulti(ops, this.limits, this.opts.defaultAcl, checkOwnAcl);
    const raw = await this.pipeline.send<MultiReply>('multi', undefined, (client, done) =>
      commitMulti(client, checked, this.opts.defaultAcl, done),
    );
    return decodeMultiReply(raw, checked, (err) => this.namingChroot(err));
  }

  private async getAclNow(path: string): Promise<{ acl: Acl[]; stat: Stat }> {
    checkRequestPath(path, 'getAcl', this.limits);
    return this.pipeline.withRetry('retry', () =>
      this.pipeline.send<{ acl: Acl[]; stat: Stat }>('getAcl', path, (client, done) =>
        client.getACL(path, (err, acl, stat) =>
          err ? done(err) : done(null, { acl: aclFromLib(acl), stat: statOf(stat) }),
        ),
      ),
    );
  }

  private async setAclNow(path: string, acl: readonly Acl[], version?: number): Promise<Stat> {
    checkRequestPath(path, 'setAcl', this.limits);
    validateAcl(acl, path);
    const expected = checkVersion(version, 'setAcl', path);
    const libAcl = aclToLib(acl);
    return this.pipeline.withRetry(expected === -1 ? 'retry' : 'once', () =>
      this.pipeline.send<Stat>('setAcl', path, (client, done) =>
        client.setACL(path, libAcl, expected, (err, stat) =>
          err ? done(err) : done(null, statOf(stat)),
        ),
      ),
    );
  }

  private async addAuthNow(scheme: string, auth: string): Promise<void> {
    if (typeof scheme !== 'string' || scheme === '' || typeof auth !== 'string') {
      throw new ZoottError('BAD_ARGUMENTS', 'addAuth needs a non-empty scheme and an auth string', {
        op: 'addAuth',
      });
    }
    if (this.session.state === 'closed')
      throw new ZoottError('CLOSED', undefined, { op: 'addAuth' });
    const client = this.session.client;
    if (this.session.state === 'lost' || !client) {
      throw new ZoottError('SESSION_EXPIRED', 'the session is lost; call renewSession()', {
        op: 'addAuth',
      });
    }
    this.session.addAuth(client, scheme, auth);
    // The library sends auth packets without waiting for an answer. The server handles a
    // session's packets in order, so once a later request returns, the auth was applied (or
    // refused: then the server ends the session and this request fails with AUTH_FAILED).
    await this.pipeline.withRetry('retry', () =>
      this.pipeline.send<void>('addAuth', undefined, (libClient, done) =>
        libClient.exists('/', undefined, (err) => done(err)),
      ),
    );
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
}

/** A multi's create with an ACL of its own: checked here (the default one was at connect). */
function checkOwnAcl(op: Op): void {
  if (op.op === 'create' && op.acl !== undefined) validateAcl(op.acl, op.path);
}
