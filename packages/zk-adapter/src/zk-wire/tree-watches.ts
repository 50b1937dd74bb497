import type { TreeEvent, TreeListener } from '@zoott/core';
import { isAtOrUnder, parentPath } from '@zoott/core/internal';
import type { RequestPipeline } from '../request-pipeline.js';
import type { LibClient } from './client-lib.js';
import { setServerWatchFilter } from './direct-reads.js';
import { jute } from './jute-speed.js';
import { ERR, EVENT, EVENT_NAME, OP, WATCH } from './protocol.js';

/**
 * Persistent recursive watches (ZooKeeper 3.6+ `addWatch`, mode PERSISTENT_RECURSIVE), which
 * node-zookeeper-client 1.1.3 does not know: the requests are built here and sent through the
 * client's own queue (so they keep their place among the other requests), and notifications
 * are taken where the library hands them to its one-shot watchers.
 *
 * The server sends one notification per change per connection, however many of that
 * connection's watches cover it. So the library's WatcherManager still gets every
 * notification (its one-shot watchers fire as before), and after it the tree watches whose
 * path is the node's or an ancestor's get it too, in the same synchronous step of the socket
 * handler: before the reply of any later request, as one-shot watches.
 *
 * Before 3.9 the server keeps one watch mode per path and connection, so a children watch set
 * before a recursive watch on the same node is lost at the server (see `hook`), and a one-shot
 * read on a watched root must not ask for a watch there (direct-reads.ts).
 *
 * A connection's watches die with it. The library re-sends its one-shot watches on a new
 * connection, never these: on `reconnected` (same session) and `connected` (a renewed one),
 * every tree watch is added again and its listener gets `reset` once the server has it.
 */

const ADD_WATCH = OP.ADD_WATCH;
const MARSHALLING_ERROR = ERR.MARSHALLING_ERROR;
/** The server had no such watch: it read the typed removal. */
const NO_WATCHER = ERR.NO_WATCHER;
const REMOVE_WATCHES = OP.REMOVE_WATCHES;
const PERSISTENT_RECURSIVE = WATCH.MODE_PERSISTENT_RECURSIVE;
const PERSISTENT_RECURSIVE_TYPE = WATCH.TYPE_PERSISTENT_RECURSIVE;

/** Notification types a recursive watch brings (lib/Event.js numbers). */
const TREE_EVENT = {
  [EVENT.NODE_CREATED]: EVENT_NAME[EVENT.NODE_CREATED],
  [EVENT.NODE_DELETED]: EVENT_NAME[EVENT.NODE_DELETED],
  [EVENT.NODE_DATA_CHANGED]: EVENT_NAME[EVENT.NODE_DATA_CHANGED],
} as const;
const NODE_CREATED = EVENT.NODE_CREATED;
const NODE_DELETED = EVENT.NODE_DELETED;
const NODE_CHILDREN_CHANGED = EVENT.NODE_CHILDREN_CHANGED;
/** Types the library's WatcherManager.emit knows; anything else would throw in the socket handler. */
const LIBRARY_EVENT_TYPES = new Set<number>(Object.values(EVENT));

interface Emitter {
  listenerCount(event: string): number;
}
interface Manager {
  queue(request: unknown, callback: (error: unknown) => void): void;
  watcherManager: {
    emit(event: { type: number; path: string }): void;
    dataWatchers: Record<string, Emitter | undefined>;
    existenceWatchers: Record<string, Emitter | undefined>;
    childWatchers: Record<string, Emitter | undefined>;
  };
}
interface Record_ {
  [field: string]: unknown;
}
interface Protocol {
  Request: new (header: unknown, payload: unknown) => { replyPayload?: () => null };
  protocol: Record<string, new () => Record_>;
}
const typedJute = jute as unknown as Protocol;
/** The jute Record prototype: byteLength/serialize driven by a record's `specification`. */
const recordProto = Object.getPrototypeOf(
  typedJute.protocol.CheckVersionRequest!.prototype,
) as object;

/** `AddWatchRequest { ustring path; int mode }` and `RemoveWatchesRequest { ustring path; int type }`. */
const WATCH_SPEC = [
  { name: 'path', type: 'ustring' },
  { name: 'mode', type: 'int' },
];

/**
 * One request of `opcode` on `path` (the client's path: the library's queue puts the chroot
 * in front) with the int field `mode`. The reply is a bare header, which the library decodes
 * only for operations it knows: `replyPayload` says there is nothing to decode.
 */
function watchRequest(opcode: number, path: string, mode: number): unknown {
  const header = new typedJute.protocol.RequestHeader!();
  header.type = opcode;
  const payload = Object.create(recordProto) as Record_;
  payload.specification = WATCH_SPEC;
  payload.chrootPath = undefined;
  payload.path = path;
  payload.mode = mode;
  const request = new typedJute.Request(header, payload);
  request.replyPayload = () => null;
  return request;
}

/** @internal Sends addWatch(path, PERSISTENT_RECURSIVE); `done` runs in the reply's handler. */
export function sendAddWatch(client: LibClient, path: string, done: (err: unknown) => void): void {
  const cm = client.connectionManager as unknown as Manager;
  cm.queue(watchRequest(ADD_WATCH, path, PERSISTENT_RECURSIVE), done);
}

/** @internal Sends removeWatches(path, PersistentRecursive); the server answers NOWATCHER when it has none. */
export function sendRemoveWatch(
  client: LibClient,
  path: string,
  done: (err: unknown) => void,
): void {
  const cm = client.connectionManager as unknown as Manager;
  cm.queue(watchRequest(REMOVE_WATCHES, path, PERSISTENT_RECURSIVE_TYPE), done);
}

/**
 * One watchTree call. `registering`: an addWatch is on its way (the first, or again after a
 * new connection); `live`: the server has it on this connection; `stale`: the connection it
 * was added on is gone.
 */
interface TreeWatch {
  readonly root: string;
  readonly listener: TreeListener;
  state: 'registering' | 'live' | 'stale';
  /** An addWatch of it is queued and unanswered: requests queued after it find it there. */
  sent: boolean;
  stopped: boolean;
}

/** Runs a listener; a throw must not reach the library's socket handler (it would corrupt its parsing). */
function deliver(listener: TreeListener, event: TreeEvent): void {
  try {
    listener(event);
  } catch (err) {
    queueMicrotask(() => {
      throw err;
    });
  }
}

/** The tree watches of one coordinator, across its connections and sessions. */
export class TreeWatches {
  private readonly watches = new Set<TreeWatch>();
  /** Library clients whose notifications already come here. */
  private readonly hooked = new WeakSet<LibClient>();
  /** Clients whose server refused the typed removal of a recursive watch (before 3.9). */
  private readonly legacy = new WeakSet<LibClient>();
  /** Clients whose server took a typed removal (3.9+): no probe before the next ones. */
  private readonly typed = new WeakSet<LibClient>();
  /** Clients with a first typed removal unanswered, and the removals waiting for its answer. */
  private readonly probing = new WeakMap<LibClient, (() => void)[]>();
  /** Per client and path: watched reads on their way that rely on the tree watch there. */
  private readonly relying = new WeakMap<LibClient, Map<string, number>>();

  constructor(private readonly pipeline: RequestPipeline) {}

  /**
   * Adds a watch on `root` (checked by the caller) and resolves with its stop function once
   * the server has it. On failure nothing stays registered.
   */
  async add(root: string, listener: TreeListener): Promise<() => void> {
    const watch: TreeWatch = { root, listener, state: 'registering', sent: false, stopped: false };
    this.watches.add(watch);
    try {
      // addWatch is idempotent: a retry after a lost reply adds nothing twice.
      await this.pipeline.withRetry('retry', () => this.register(watch, false));
    } catch (err) {
      this.watches.delete(watch);
      throw err;
    }
    return () => this.stop(watch);
  }

  /** The connection changed: what the server had is gone (a session event; see the coordinator). */
  disconnected(): void {
    for (const watch of this.watches) if (watch.state === 'live') watch.state = 'stale';
  }

  /** A new connection (same session or a renewed one): add every stale watch again. */
  connected(): void {
    for (const watch of this.watches) {
      if (watch.state !== 'stale') continue;
      watch.state = 'registering';
      // A failure leaves it stale: the connection is gone again, and the next one retries.
      this.register(watch, true).catch(() => {
        if (watch.state === 'registering') watch.state = 'stale';
      });
    }
  }

  /** The coordinator is closed: no listener hears anything again. */
  clear(): void {
    for (const watch of this.watches) watch.stopped = true;
    this.watches.clear();
  }

  /**
   * One addWatch for `watch`. The reply's handler marks it live (and, after a new connection,
   * gives `reset`) before the library reads the notifications behind that reply.
   */
  private register(watch: TreeWatch, again: boolean): Promise<void> {
    return this.pipeline.send<void>('watchTree', watch.root, (client, done) => {
      this.hook(client);
      watch.sent = true;
      sendAddWatch(client, watch.root, (err) => {
        watch.sent = false;
        if (!err && !watch.stopped && watch.state === 'registering') {
          watch.state = 'live';
          if (again) deliver(watch.listener, { type: 'reset' });
        }
        done(err);
      });
    });
  }

  private stop(watch: TreeWatch): void {
    if (watch.stopped) return;
    watch.stopped = true;
    // The local cut-off: notifications already on their way must not reach the listener.
    this.watches.delete(watch);
    // The server keeps one watch per path and connection: drop it only when no other
    // watchTree call of this coordinator still needs it.
    for (const other of this.watches) if (other.root === watch.root) return;
    this.pipeline
      .send<void>('watchTree', watch.root, (c, done) => this.remove(c, watch.root, done))
      .catch(() => {
        // Best effort: a lost connection or session has dropped the server's watch anyway.
      });
  }

  /**
   * Sends the typed removal of the server's watch on `root`, unless that is not safe. The first
   * one on a connection is a probe: until the server has answered it, later removals wait, so
   * a server that cannot read the typed removal (3.6 to 3.8) refuses one, not every removal
   * sent before its first answer came back (each refusal is an ERROR with a stack trace in
   * its log; a worker dropping many bucket watches at once sent dozens).
   */
  private remove(client: LibClient, root: string, done: (err: unknown) => void): void {
    const waiting = this.probing.get(client);
    if (waiting) {
      waiting.push(() => this.remove(client, root, done));
      return;
    }
    if (!this.serverWatchDroppable(client, root)) {
      done(null);
      return;
    }
    const probe = !this.typed.has(client);
    if (probe) this.probing.set(client, []);
    sendRemoveWatch(client, root, (err) => {
      const code = (err as { code?: number } | null)?.code;
      // 3.6 to 3.8 know no removal of a recursive watch alone (they fail to read the type):
      // their watches stay until the connection ends, ignored here.
      if (code === MARSHALLING_ERROR) this.legacy.add(client);
      else if (err === null || err === undefined || code === NO_WATCHER) this.typed.add(client);
      const queued = probe ? this.probing.get(client) : undefined;
      if (probe) this.probing.delete(client);
      done(err);
      for (const next of queued ?? []) next();
    });
  }

  /**
   * Whether removing the server's recursive watch on `root` is safe: the server takes the
   * typed removal, and no one-shot watch of the library on that node relies on it (set while
   * the tree watch was there, see direct-reads.ts) or is on its way.
   */
  private serverWatchDroppable(client: LibClient, root: string): boolean {
    if (this.legacy.has(client)) return false;
    if ((this.relying.get(client)?.get(root) ?? 0) > 0) return false;
    const cm = client.connectionManager as unknown as Manager;
    const wm = cm.watcherManager;
    if (
      wm.dataWatchers[root] !== undefined &&
      wm.dataWatchers[root].listenerCount('notification') > 0
    )
      return false;
    const ex = wm.existenceWatchers[root];
    return ex === undefined || ex.listenerCount('notification') === 0;
  }

  /** Routes the client's notifications to the tree watches too, after its one-shot watchers. */
  private hook(client: LibClient): void {
    if (this.hooked.has(client)) return;
    this.hooked.add(client);
    const wm = (client.connectionManager as unknown as Manager).watcherManager;
    const oneShot = wm.emit.bind(wm);
    wm.emit = (event) => {
      if (LIBRARY_EVENT_TYPES.has(event.type)) oneShot(event);
      this.dispatch(event.type, event.path);
      // Before 3.9 the server keeps one watch mode per path and connection: a children watch
      // set before a recursive watch on the same node becomes that recursive watch and never
      // fires (not even once the recursive watch is gone: 3.6 to 3.8 cannot remove it alone).
      // A child's own created/deleted is the change that watch reports, so it fires from that.
      // Where the server did keep it, its own event comes right after this one and finds the
      // watcher gone: each watcher still fires once.
      if (event.type === NODE_CREATED || event.type === NODE_DELETED) {
        const parent = parentPath(event.path);
        if (event.path !== '/' && wm.childWatchers[parent] !== undefined) {
          oneShot({ type: NODE_CHILDREN_CHANGED, path: parent });
        }
      }
    };
    const relying = new Map<string, number>();
    this.relying.set(client, relying);
    setServerWatchFilter(client, {
      coveredByTree: (path) => {
        // Live, or its addWatch is ahead of this read in the connection's queue.
        for (const watch of this.watches) {
          if (watch.root === path && (watch.state === 'live' || watch.sent)) return true;
        }
        return false;
      },
      readSent: (path) => relying.set(path, (relying.get(path) ?? 0) + 1),
      readDone: (path) => {
        const remaining = (relying.get(path) ?? 1) - 1;
        if (remaining > 0) relying.set(path, remaining);
        else relying.delete(path);
      },
    });
  }

  private dispatch(type: number, path: string): void {
    const name = TREE_EVENT[type as keyof typeof TREE_EVENT];
    if (name === undefined) return;
    for (const watch of this.watches) {
      if (watch.state !== 'live' || !isAtOrUnder(path, watch.root)) continue;
      deliver(watch.listener, { type: name, path });
    }
  }
}
