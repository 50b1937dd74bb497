import type { Acl } from './acl.js';

/**
 * What ZooKeeper keeps about every node. zxids and times are numbers: zxids stay exact
 * below 2^53, which a real ensemble reaches only after ~2 million leader elections.
 */
export interface Stat {
  /** zxid of the transaction that created the node. */
  czxid: number;
  /** zxid of the last data change. */
  mzxid: number;
  /** zxid of the last change to the node's children. */
  pzxid: number;
  /** Creation time, ms since the epoch (server clock). */
  ctime: number;
  /** Last data change, ms since the epoch (server clock). */
  mtime: number;
  /** Number of data changes; a fresh node has version 0. */
  version: number;
  /** Number of changes to the children list (creates and deletes). */
  cversion: number;
  /** Number of ACL changes. */
  aversion: number;
  /** Session id (16 hex digits) owning this ephemeral node, or `null` for a persistent node. */
  ephemeralOwner: string | null;
  dataLength: number;
  numChildren: number;
}

/** A node's bytes and its stat, as `get` returns them. */
export interface NodeData {
  data: Uint8Array;
  stat: Stat;
}

/** Options of `create`: ephemeral, sequential, ACL. */
export interface CreateOptions {
  /** Deleted by the server when the creating session ends. Ephemerals cannot have children. */
  ephemeral?: boolean;
  /**
   * The server appends a 10-digit, zero-padded counter taken from the parent's cversion.
   * Adapters that retry after a lost reply make such creates "protected": they mark the
   * name so the retry finds the node instead of making a second one.
   */
  sequential?: boolean;
  /** ACL of the new node; defaults to the coordinator's default ACL (open unless configured). */
  acl?: readonly Acl[];
}

/** ZooKeeper's watch event types. `none` is not delivered to node watchers. */
export type WatchEventType = 'created' | 'deleted' | 'dataChanged' | 'childrenChanged';

/** What fired a watcher: the kind of change and the node. */
export interface WatchEvent {
  type: WatchEventType;
  /** Path as the client sees it (chroot removed). */
  path: string;
}

/**
 * A one-shot watcher. It fires at most once, after the change it reports has been applied,
 * and before the client sees the result of any later request (ZooKeeper's ordering).
 */
export type Watcher = (event: WatchEvent) => void;

/**
 * What a tree watch reports (see `Coordinator.watchTree`): a node at or under the watched
 * path was created, deleted or had its data set (ACL changes are not reported), or `reset`:
 * events may have been missed (the connection dropped, or the session changed), so anything
 * the listener built from earlier events must be read afresh.
 */
export type TreeEvent =
  | { type: 'created' | 'deleted' | 'dataChanged'; path: string }
  | { type: 'reset' };

/** A tree watch's listener. */
export type TreeListener = (event: TreeEvent) => void;

/** Options of the reads that can leave a watch (`get`, `exists`, `children`). */
export interface WatchOptions {
  watch?: Watcher;
}

/** Operations inside an atomic `multi`. A version of -1 (or omitted) means "any version". */
export type Op =
  | {
      op: 'create';
      path: string;
      data?: Uint8Array;
      ephemeral?: boolean;
      sequential?: boolean;
      acl?: readonly Acl[];
    }
  | { op: 'set'; path: string; data: Uint8Array; version?: number }
  | { op: 'delete'; path: string; version?: number }
  | { op: 'check'; path: string; version: number };

/** The result of one operation of a successful `multi`, in order. */
export type OpResult =
  | { op: 'create'; path: string }
  | { op: 'set'; stat: Stat }
  | { op: 'delete' }
  | { op: 'check' };

/**
 * Where the client stands with its session:
 * - `connecting`: not connected yet: the first connection, or a `renewSession()` after `lost`;
 * - `connected`: requests flow;
 * - `suspended`: the connection dropped; the session may still live on the server, so
 *   ephemerals (claims, locks) may still be held, but nothing can be confirmed;
 * - `lost`: the session is gone (the server said so, or the session timeout passed while
 *   disconnected): every ephemeral it owned is gone or going, and every later request fails
 *   with SESSION_EXPIRED until `renewSession()`;
 * - `closed`: `close()` was called.
 */
export type SessionState = 'connecting' | 'connected' | 'suspended' | 'lost' | 'closed';

/** Session transitions a listener hears: connected, suspended, reconnected, lost, closed. */
export type SessionEventType = 'connected' | 'suspended' | 'reconnected' | 'lost' | 'closed';

/** One session transition, as `onSession` listeners receive it. */
export interface SessionEvent {
  type: SessionEventType;
  /** Session id after the event (16 hex digits), `null` when there is none. */
  sessionId: string | null;
}

/** A listener given to `onSession`. */
export type SessionListener = (event: SessionEvent) => void;

/**
 * The ZooKeeper-shaped surface everything in zoott is written against.
 *
 * Concurrency contract, shared by every adapter:
 * - Requests from one client are applied in the order they were issued (FIFO), and their
 *   promises settle in that order within a session: a request issued after the session was
 *   lost and renewed does not wait for one of the lost session (which fails SESSION_EXPIRED). Watch callbacks for a change run before the promise of any
 *   request issued after that change settles.
 * - Every write is atomic and linearizable; reads may lag other clients' writes but never go
 *   back in time for one client.
 * - Errors are `ZoottError`s with a code from the shared registry, naming the op and path.
 *   CONNECTION_LOSS means "outcome unknown": the write may or may not have been applied.
 * - A request never waits forever: adapters give every call a deadline.
 */
export interface Coordinator {
  /** Current session id (16 hex digits), or `null` while there is none. */
  readonly sessionId: string | null;
  readonly state: SessionState;
  /** Session timeout negotiated with the server, in ms. */
  readonly sessionTimeoutMs: number;

  /** Subscribes to session lifecycle events; returns the unsubscribe function. */
  onSession(listener: SessionListener): () => void;

  /**
   * Creates a node and returns its actual path (with the sequence suffix for sequential nodes).
   * Of concurrent creators of one path exactly one succeeds; the others get NODE_EXISTS.
   * Fails with NO_NODE when the parent is missing and NO_CHILDREN_FOR_EPHEMERALS under an
   * ephemeral parent. Sequential suffixes under one parent are strictly increasing.
   */
  create(path: string, data?: Uint8Array, options?: CreateOptions): Promise<string>;

  /** Data and stat of a node; NO_NODE if absent. The watch (data) is set only on success. */
  get(path: string, options?: WatchOptions): Promise<NodeData>;

  /**
   * Replaces the data if `version` matches (-1 = any). Of concurrent setters with the same
   * expected version exactly one succeeds; the others get BAD_VERSION. Version 0 means "only
   * a node never written since creation", never "any".
   */
  set(path: string, data: Uint8Array, version?: number): Promise<Stat>;

  /**
   * Deletes a childless node if `version` matches (-1 = any). NOT_EMPTY if it has children,
   * NO_NODE if absent. Of concurrent deleters exactly one succeeds.
   */
  delete(path: string, version?: number): Promise<void>;

  /**
   * Stat of the node or `null`. The watch is set in both cases: it fires `created` for an
   * absent node, `dataChanged` or `deleted` for a present one.
   */
  exists(path: string, options?: WatchOptions): Promise<Stat | null>;

  /** Child names (unsorted, as the server gives them). The watch fires on create/delete of a child or of the node itself. */
  children(path: string, options?: WatchOptions): Promise<string[]>;

  /** Child names together with the parent's stat, read atomically. */
  childrenWithStat(
    path: string,
    options?: WatchOptions,
  ): Promise<{ children: string[]; stat: Stat }>;

  /**
   * Applies all ops or none. On failure throws a ZoottError with `op: 'multi'`, the failing
   * op's code and `opIndex`, and `opCodes` for every op. A check with version 0 succeeds only
   * on a node never written since creation.
   */
  multi(ops: readonly Op[]): Promise<OpResult[]>;

  /**
   * Optional: a persistent recursive watch (ZooKeeper 3.6+ `addWatch`,
   * PERSISTENT_RECURSIVE). Adapters that offer it MUST hold to all of this:
   * - It resolves once the watch is registered: every change committed after that, at `path`
   *   or at any depth under it, is reported to `listener` once, in commit order, with the
   *   path as the client sees it (chroot removed). `path` need not exist.
   * - Ordering is that of one-shot watches: the event of a change runs before the promise of
   *   any request issued after that change settles, and after the events of earlier changes.
   *   Children changes are not reported as such: the child's own `created`/`deleted` is.
   * - It survives connection drops and new sessions: the adapter registers it again, then
   *   emits `reset` once it is in place, and the events that follow are complete from there.
   *   Until that `reset`, events of the gap may be missing.
   * - The returned function stops it: no event (not even `reset`) reaches `listener` after
   *   it returns, and the server is told to drop the watch where it can. Calling it again is
   *   a no-op.
   * - A server without the operation (ZooKeeper before 3.6) rejects it with UNIMPLEMENTED,
   *   and nothing stays registered: callers fall back to one-shot watches.
   * - One-shot watches on the same nodes keep firing as before, whether they were set before
   *   the tree watch or after it, and after it stops; a change that fires both fires each
   *   once. (ZooKeeper before 3.9 keeps one watch mode per path and connection, so an adapter
   *   over it has to make this hold itself.)
   */
  watchTree?(path: string, listener: TreeListener): Promise<() => void>;

  getAcl(path: string): Promise<{ acl: Acl[]; stat: Stat }>;

  /** Replaces a node's ACL if `aversion` matches `version` (-1 = any). */
  setAcl(path: string, acl: readonly Acl[], version?: number): Promise<Stat>;

  /** Adds credentials to the session (e.g. `digest`, `user:password`). Lasts for the session. */
  addAuth(scheme: string, auth: string): Promise<void>;

  /**
   * After `lost`: opens a new session with the same connection settings and credentials.
   * Resolves once connected (a `connected` event with the new id is emitted).
   */
  renewSession(): Promise<void>;

  /** Ends the session (its ephemerals go at once) and releases every resource. Idempotent. */
  close(): Promise<void>;
}
