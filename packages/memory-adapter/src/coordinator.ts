import {
  type Acl,
  type Coordinator,
  type CreateOptions,
  type NodeData,
  type Op,
  type OpResult,
  type SessionEvent,
  type SessionEventType,
  type SessionListener,
  type SessionState,
  type Stat,
  type TreeListener,
  type WatchEventType,
  type Watcher,
  type WatchOptions,
  ZoottError,
} from '@zoott/core';
import {
  checkData,
  checkFrame,
  checkMulti,
  checkRequestPath,
  checkVersion,
  multiCodes,
  type RequestLimits,
} from '@zoott/core/internal';
import { type AuthId, addAuthId, authenticate } from './acl-rules.js';
import { ClientTreeWatches, type TreeWatchReg } from './client-tree-watches.js';
import { MultiRefusal, ServerRefusal } from './refusal.js';
import type { ClientSettings, ServerState, Session, SessionPeer } from './server-state.js';
import type { WatchRegistration } from './watches.js';

/** A one-shot or tree watch's event (server path), or a tree watch's `reset`. */
type PendingEvent =
  | { type: WatchEventType; path: string; watchers: Watcher[] }
  | { type: 'reset'; tree: TreeWatchReg };

const EMPTY = new Uint8Array(0);

/** Reports a throwing listener without letting it break the server's bookkeeping. */
function reportListenerError(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}

/**
 * One client session against a {@link MemoryServer}. Requests run one at a time in the order
 * they were issued; each runs to completion on the server in a microtask, so everything is
 * deterministic. Watch callbacks for changes this client made run before the request's promise
 * settles; other clients get theirs in a microtask, and always before any later reply.
 *
 * Created by `MemoryServer.connect()`; do not construct it directly.
 */
export class MemoryCoordinator implements Coordinator {
  private current: SessionState = 'connecting';
  private session: Session | null = null;
  private readonly listeners = new Set<SessionListener>();
  private tail: Promise<unknown> = Promise.resolve();
  private inbox: PendingEvent[] = [];
  private flushQueued = false;
  /** Watches kept by the client while its connection is down, and the last zxid it saw. */
  private away: { watches: WatchRegistration[]; lastZxid: number } | null = null;
  /** The server ended the session while we were disconnected; we learn it on reconnect. */
  private expiredWhileAway = false;
  private readonly auth: Array<{ scheme: string; auth: string }>;
  private readonly trees: ClientTreeWatches;

  /** @internal Use `MemoryServer.connect()`. */
  constructor(
    private readonly server: ServerState,
    private readonly settings: ClientSettings,
  ) {
    this.auth = [...settings.auth];
    this.trees = new ClientTreeWatches(
      server,
      (path) => this.toServer(path),
      (tree) => this.deliverLater({ type: 'reset', tree }),
    );
  }

  /** @internal Opens the first session; called by `MemoryServer.connect()`. */
  open(): void {
    this.startSession();
  }

  get sessionId(): string | null {
    return this.session?.id ?? null;
  }

  get state(): SessionState {
    return this.current;
  }

  get sessionTimeoutMs(): number {
    return this.settings.sessionTimeoutMs;
  }

  onSession(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  // ---- connection control (memory-only) -------------------------------------------------

  /**
   * Simulates a dropped connection: `suspended`. The session lives on the server (its
   * ephemerals stay), requests fail CONNECTION_LOSS, and the server forgets this client's
   * watches until `reconnect()` re-sets them. With timers in use, the session expires once it
   * has been disconnected for its timeout, and the client then sees `lost`.
   */
  disconnect(): void {
    if (this.current !== 'connected' || !this.session) return;
    const lastZxid = this.server.zxid;
    const watches = this.server.connectionDropped(this.session);
    this.away = { watches, lastZxid };
    this.current = 'suspended';
    this.emit('suspended');
  }

  /**
   * Ends a `disconnect()`: `reconnected` with the same session (watches whose node changed
   * meanwhile fire right after), or `lost` if the session expired in the meantime.
   */
  reconnect(): void {
    if (this.current !== 'suspended' || !this.session) return;
    if (this.expiredWhileAway || !this.session.alive) {
      this.server.stopTimer(this.session);
      this.becomeLost();
      return;
    }
    const away = this.away ?? { watches: [], lastZxid: this.server.zxid };
    this.away = null;
    this.current = 'connected';
    this.emit('reconnected');
    this.server.connectionRestored(this.session, away.watches, away.lastZxid);
    this.trees.registerAll(this.session);
  }

  // ---- Coordinator ----------------------------------------------------------------------

  create(path: string, data?: Uint8Array, options: CreateOptions = {}): Promise<string> {
    return this.checkedRequest(
      'create',
      path,
      () => {
        const bytes = checkData(data, 'create', path, this.limits.maxDataBytes) ?? EMPTY;
        const acl = options.acl ?? this.settings.defaultAcl;
        const frame = { op: 'create', path, dataBytes: bytes.length, acl } as const;
        checkFrame([frame], false, this.limits, 'create', path);
        return bytes;
      },
      (session, bytes) => {
        const full = this.server.create(session, {
          path: this.toServer(path),
          data: bytes,
          ephemeral: options.ephemeral === true,
          sequential: options.sequential === true,
          acl: options.acl ?? this.settings.defaultAcl,
        });
        return this.toClient(full);
      },
    );
  }

  get(path: string, options: WatchOptions = {}): Promise<NodeData> {
    return this.request('get', path, (session) =>
      this.server.getData(session, this.toServer(path), options.watch),
    );
  }

  set(path: string, data: Uint8Array, version?: number): Promise<Stat> {
    return this.checkedRequest(
      'set',
      path,
      () => {
        const bytes = checkData(data, 'set', path, this.limits.maxDataBytes) ?? EMPTY;
        const expected = checkVersion(version, 'set', path);
        const frame = { op: 'set', path, dataBytes: bytes.length } as const;
        checkFrame([frame], false, this.limits, 'set', path);
        return { bytes, expected };
      },
      (s, { bytes, expected }) => this.server.setData(s, this.toServer(path), bytes, expected),
    );
  }

  delete(path: string, version?: number): Promise<void> {
    return this.checkedRequest(
      'delete',
      path,
      () => checkVersion(version, 'delete', path),
      (s, expected) => this.server.delete(s, this.toServer(path), expected),
    );
  }

  exists(path: string, options: WatchOptions = {}): Promise<Stat | null> {
    return this.request('exists', path, (session) =>
      this.server.exists(session, this.toServer(path), options.watch),
    );
  }

  children(path: string, options: WatchOptions = {}): Promise<string[]> {
    return this.request(
      'children',
      path,
      (s) => this.server.getChildren(s, this.toServer(path), options.watch).children,
    );
  }

  childrenWithStat(
    path: string,
    options: WatchOptions = {},
  ): Promise<{ children: string[]; stat: Stat }> {
    return this.request('childrenWithStat', path, (session) =>
      this.server.getChildren(session, this.toServer(path), options.watch),
    );
  }

  multi(ops: readonly Op[]): Promise<OpResult[]> {
    return this.checkedRequest(
      'multi',
      undefined,
      () => this.prepareMulti(ops),
      (session, prepared) => {
        try {
          return this.server
            .multi(session, prepared)
            .map(
              (result): OpResult =>
                result.op === 'create'
                  ? { op: 'create', path: this.toClient(result.path) }
                  : result,
            );
        } catch (err) {
          if (err instanceof MultiRefusal) {
            const failed = ops[err.opIndex];
            throw new ZoottError(err.code, err.reason, {
              op: 'multi',
              path: failed?.path,
              opIndex: err.opIndex,
              opCodes: err.opCodes,
            });
          }
          throw err;
        }
      },
    );
  }

  watchTree(path: string, listener: TreeListener): Promise<() => void> {
    return this.request('watchTree', path, (s) => this.trees.add(s, path, listener));
  }

  getAcl(path: string): Promise<{ acl: Acl[]; stat: Stat }> {
    return this.request('getAcl', path, (s) => this.server.getAcl(s, this.toServer(path)));
  }

  setAcl(path: string, acl: readonly Acl[], version?: number): Promise<Stat> {
    return this.request('setAcl', path, (session) =>
      this.server.setAcl(session, this.toServer(path), acl, checkVersion(version, 'setAcl', path)),
    );
  }

  addAuth(scheme: string, auth: string): Promise<void> {
    return this.request('addAuth', undefined, (session) => {
      const id = authenticate(scheme, auth);
      addAuthId(session.authIds, id);
      this.auth.push({ scheme, auth });
    });
  }

  renewSession(): Promise<void> {
    return this.enqueue(() => {
      if (this.current === 'closed') {
        throw new ZoottError('CLOSED', 'renewSession after close()', { op: 'renewSession' });
      }
      if (this.current !== 'lost') return;
      this.startSession();
    });
  }

  close(): Promise<void> {
    return this.enqueue(() => {
      if (this.current === 'closed') return;
      if (this.session) this.server.closeSession(this.session);
      this.session = null;
      this.away = null;
      this.trees.clear();
      this.current = 'closed';
      this.emit('closed');
    });
  }

  // ---- internals ------------------------------------------------------------------------

  private startSession(): void {
    const ids: AuthId[] = [];
    for (const { scheme, auth } of this.auth) {
      try {
        addAuthId(ids, authenticate(scheme, auth));
      } catch (err) {
        throw this.translate(err, 'connect', undefined);
      }
    }
    // A session that already ended may still report (a late timer): only the current one counts.
    let mine: Session | null = null;
    const peer: SessionPeer = {
      notify: (type, path, watchers) => {
        if (mine === this.session) this.deliverLater({ type, path, watchers });
      },
      expired: (observed) => {
        if (mine !== this.session || this.current === 'closed' || this.current === 'lost') return;
        if (observed) this.becomeLost();
        else this.expiredWhileAway = true;
      },
    };
    mine = this.server.openSession(peer, this.settings.sessionTimeoutMs, ids);
    this.session = mine;
    this.expiredWhileAway = false;
    this.away = null;
    this.current = 'connected';
    this.emit('connected');
    this.trees.registerAll(mine);
  }

  private becomeLost(): void {
    this.session = null;
    this.away = null;
    this.expiredWhileAway = false;
    this.current = 'lost';
    this.emit('lost');
  }

  private emit(type: SessionEventType): void {
    const event: SessionEvent = { type, sessionId: this.sessionId };
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        reportListenerError(err);
      }
    }
  }

  private deliverLater(event: PendingEvent): void {
    this.inbox.push(event);
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.flushInbox();
    });
  }

  private flushInbox(): void {
    while (this.inbox.length > 0) {
      const next = this.inbox.shift() as PendingEvent;
      if (next.type === 'reset') {
        this.trees.reset(next.tree, reportListenerError);
        continue;
      }
      const event = { type: next.type, path: this.toClient(next.path) };
      for (const watcher of next.watchers) {
        try {
          watcher(event);
        } catch (err) {
          reportListenerError(err);
        }
      }
    }
  }

  /** Runs `fn` after every earlier request of this client, FIFO. */
  private enqueue<T>(fn: () => T): Promise<T> {
    const run = this.tail.then(() => {
      this.flushInbox();
      try {
        return fn();
      } finally {
        // Watches this request fired belong before its reply.
        this.flushInbox();
      }
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** A request that needs a live, connected session; `path` is checked first if given. */
  private request<T>(
    op: string,
    path: string | undefined,
    fn: (session: Session) => T,
  ): Promise<T> {
    return this.checkedRequest(op, path, () => undefined, fn);
  }

  /**
   * A request whose arguments are checked by `check` before the session state is looked at:
   * like a real client, bad input is reported as such even on a closed or disconnected client.
   * `fn` gets what `check` returned.
   */
  private checkedRequest<C, T>(
    op: string,
    path: string | undefined,
    check: () => C,
    fn: (session: Session, checked: C) => T,
  ): Promise<T> {
    return this.enqueue(() => {
      try {
        if (path !== undefined) checkRequestPath(path, op, this.limits);
        const checked = check();
        return fn(this.liveSession(op, path), checked);
      } catch (err) {
        throw this.translate(err, op, path);
      }
    });
  }

  /** What the shared request checks measure against: the server's data limit, our chroot. */
  private get limits(): RequestLimits {
    return { maxDataBytes: this.server.options.maxDataBytes, chroot: this.settings.chroot };
  }

  /**
   * The shared client-side checks of a multi, then the ops as the server takes them: paths
   * under the chroot, the default ACL filled in, versions and data made explicit.
   */
  private prepareMulti(ops: readonly Op[]): Op[] {
    const checked = checkMulti(ops, this.limits, this.settings.defaultAcl);
    return checked.map((op, index) => this.prepareOp(op, index, checked.length));
  }

  private liveSession(op: string, path: string | undefined): Session {
    switch (this.current) {
      case 'closed':
        throw new ZoottError('CLOSED', undefined, { op, path });
      case 'lost':
        throw new ZoottError('SESSION_EXPIRED', 'the session expired; call renewSession()', {
          op,
          path,
        });
      case 'suspended':
        throw new ZoottError('CONNECTION_LOSS', 'disconnected from the memory server', {
          op,
          path,
        });
      default:
        if (!this.session) throw new ZoottError('CONNECTION_LOSS', undefined, { op, path });
        return this.session;
    }
  }

  private translate(err: unknown, op: string, path: string | undefined): unknown {
    if (err instanceof ServerRefusal) {
      return new ZoottError(err.code, err.reason, { op, path });
    }
    return err;
  }

  /** One checked multi op as the server takes it. */
  private prepareOp(op: Op, index: number, count: number): Op {
    const path = this.toServer(op.path);
    switch (op.op) {
      case 'create':
        return { ...op, path, data: op.data ?? EMPTY, acl: op.acl ?? this.settings.defaultAcl };
      case 'set':
        return { ...op, path, data: op.data ?? EMPTY, version: op.version ?? -1 };
      case 'delete':
        return { ...op, path, version: op.version ?? -1 };
      case 'check':
        // A check exists to compare a version; one without is refused rather than sent as "any".
        if (op.version === undefined) {
          throw new ZoottError('BAD_ARGUMENTS', `op ${index} (check): check needs a version`, {
            op: 'multi',
            path: op.path,
            opIndex: index,
            opCodes: multiCodes(count, index, 'BAD_ARGUMENTS'),
            field: 'version',
          });
        }
        return { ...op, path };
    }
  }

  private toServer(path: string): string {
    const chroot = this.settings.chroot;
    if (!chroot) return path;
    return path === '/' ? chroot : chroot + path;
  }

  private toClient(path: string): string {
    const chroot = this.settings.chroot;
    if (!chroot) return path;
    if (path === chroot) return '/';
    return path.startsWith(`${chroot}/`) ? path.slice(chroot.length) : path;
  }
}
