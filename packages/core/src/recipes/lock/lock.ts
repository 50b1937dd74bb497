import type { Coordinator, SessionEvent } from '../../contract/coordinator.js';
import { isZoottError, ZoottError } from '../../contract/errors.js';
import { parentPath } from '../../contract/paths.js';
import { ZkConf, type ZkConfInit } from '../conf/zk-conf.js';
import { closeCoordinator } from '../connection/close-coordinator.js';
import {
  type ConnectFn,
  type OpenedCoordinator,
  openCoordinator,
} from '../connection/coordinator-source.js';
import { lockId } from '../lock-id/lock-id.js';
import { Deadline, timeoutOrDefault, waitForSignal } from '../support/deadline.js';
import { ensurePath } from '../support/ensure-path.js';
import { Signal } from '../support/signal.js';
import {
  decodeIdentifier,
  encodeIdentifier,
  type LockIdentifier,
  toIdentifier,
} from './lock-identifier.js';
import { LockTimeout } from './lock-timeout.js';

/** Why `onLost` fired: the session ended, or the lock node was deleted or rewritten by someone else. */
export type LockLostReason = 'session' | 'node';

/** Options of a `Lock`: its coordinator or settings, and what to do when it is lost. */
export interface LockOptions {
  /** A connected Coordinator to use (zkutil's `zkclient`); the lock never closes it. */
  coordinator?: Coordinator;
  /**
   * Settings (zkutil's `zkconf`): `lockDir`, `nodeId`, `acl`, and for a lock that opens its
   * own connection `hosts` and `auth`. Defaults to `new ZkConf()` (defaults only: build the
   * ZkConf with `{ env, file }` to get the fallbacks).
   */
  conf?: ZkConf | ZkConfInit | string;
  /** Opens the lock's own connection when no `coordinator` is given (see `ConnectFn`). */
  connect?: ConnectFn;
  /**
   * Called (once per acquisition) when a held lock is lost: the session ended, or the node
   * was deleted/changed by someone else. Stop working under the lock when it fires. Required
   * when the lock opens its own connection, as in zkutil.
   */
  onLost?: (reason: LockLostReason) => void;
  /** Who this holder is; defaults to `lockId(conf.nodeId())`. Different processes must differ. */
  identifier?: string | { id: string; val?: unknown };
  /** Ephemeral node (default), or a persistent one that survives the session. */
  ephemeral?: boolean;
  /** Default wait of `acquire`/`acquireLoop`, in milliseconds (default 10 000). */
  timeoutMs?: number;
}

/** `[acquired, holder, version]` — see `tryAcquire` / `tryRelease`. */
export type LockAttempt = [ok: boolean, holder: string | null, version: number];

interface SeenHolder {
  id: string;
  version: number;
}

const fired = (): Signal => {
  const signal = new Signal();
  signal.fire();
  return signal;
};

/**
 * zkutil's ZKLock: a lock held by creating one node, `<lockDir>/<name>` (default
 * `/lock/<name>`), whose data names the holder (`{"id": ..., "val": ...}`). Contenders
 * watch the node and try again when it changes; there is no queue, so the lock is not fair,
 * but any number of locks costs one node each and the holder can be read from the node.
 *
 * ```ts
 * await using lock = new Lock('foo', { coordinator: zk, onLost: () => abort.abort() });
 * await lock.acquire();      // LockTimeout after 10 s
 * // ... work; `await using` releases at the end of the block
 * ```
 *
 * After a create whose reply was lost the lock reads the node and recognises its own
 * identifier, so an acquisition that did happen is not mistaken for someone else's.
 * Timeouts are milliseconds; a negative timeout tries once.
 */
export class Lock {
  readonly name: string;
  /** Path of the lock node. */
  readonly path: string;
  readonly identifier: LockIdentifier;
  readonly ephemeral: boolean;
  readonly timeoutMs: number;

  private readonly conf: ZkConf;
  private readonly given: Coordinator | undefined;
  private readonly connect: ConnectFn | undefined;
  private readonly onLost: ((reason: LockLostReason) => void) | undefined;
  private conn: Promise<OpenedCoordinator> | undefined;
  private offSession: (() => void) | undefined;
  private locked = false;
  private seen: SeenHolder | null = null;
  private maybeAvailable: Signal = fired();
  /** Increases with every read of the node, so a watch from an older read cannot report a loss. */
  private generation = 0;
  private heldGeneration = -1;
  /** The acquisition (`heldGeneration`) whose loss was already reported. */
  private lostReported = -1;

  constructor(name: string | number, options: LockOptions = {}) {
    this.conf = ZkConf.from(options.conf ?? {});
    this.name = String(name);
    this.path = this.conf.lock(name);
    this.given = options.coordinator;
    this.connect = options.connect;
    this.onLost = options.onLost;
    if (!this.given) {
      if (!this.connect) {
        throw new ZoottError(
          'INVALID_CONFIG',
          'a Lock needs a `coordinator` or a `connect` factory',
          {
            field: 'connect',
          },
        );
      }
      if (!this.onLost) {
        throw new ZoottError(
          'INVALID_CONFIG',
          'a Lock that opens its own connection needs `onLost` to hear about losing it',
          { field: 'onLost' },
        );
      }
    }
    this.identifier = toIdentifier(options.identifier ?? lockId(this.conf.nodeId()));
    this.ephemeral = options.ephemeral ?? true;
    this.timeoutMs = timeoutOrDefault(options.timeoutMs, 10_000);
  }

  /** Whether this lock holds the node, as far as it knows. */
  isLocked(): boolean {
    return this.locked;
  }

  /** The holder seen by the last read (`null` if the node was absent), with the node version. */
  get holder(): { id: string; version: number } | null {
    return this.seen ? { ...this.seen } : null;
  }

  /**
   * Acquires the lock, waiting up to `timeoutMs` (default: the lock's `timeoutMs`) for the
   * current holder to let go. Resolves to the lock itself.
   *
   * @throws LockTimeout (code LOCK_TIMEOUT) when the time runs out.
   */
  async acquire(timeoutMs?: number): Promise<this> {
    for await (const _busy of this.acquireLoop(timeoutMs)) {
      // Only the end of the loop matters here.
    }
    return this;
  }

  /**
   * Acquires the lock, yielding `[holder, version]` each time it finds the lock held by
   * someone else, so the caller can report or give up (`break`) while waiting. Ends once
   * the lock is acquired.
   *
   * @throws LockTimeout (code LOCK_TIMEOUT) when the time runs out.
   */
  async *acquireLoop(
    timeoutMs?: number,
  ): AsyncGenerator<[holder: string | null, version: number], void, undefined> {
    const wait = timeoutOrDefault(timeoutMs, this.timeoutMs);
    const deadline = new Deadline(wait);
    const zk = await this.client();
    for (;;) {
      // A negative or spent timeout still makes one attempt when the lock may be free.
      if (!(await waitForSignal(this.maybeAvailable, deadline))) {
        throw new LockTimeout(
          `could not acquire ${this.path} within ${wait} ms (held by ${this.seen?.id ?? 'nobody'})`,
          { path: this.path },
        );
      }
      await this.create(zk);
      await this.readHolder(zk);
      if (this.locked) return;
      if (this.maybeAvailable.fired) continue;
      yield [this.seen?.id ?? null, this.seen?.version ?? -1];
    }
  }

  /**
   * One attempt that never waits. Returns `[true, ownId, -1]` when the lock is acquired,
   * else `[false, holderId, version]` of the node found.
   */
  async tryAcquire(): Promise<LockAttempt> {
    // One real attempt, whatever this lock last saw: the holder's release reaches this
    // session as a watch event, which may still be on its way when the caller knows (from the
    // holder's own reply, say) that the lock is free.
    this.maybeAvailable = fired();
    try {
      await this.acquire(-1);
    } catch (err) {
      if (!(err instanceof LockTimeout)) throw err;
    }
    return this.locked
      ? [true, this.identifier.id, -1]
      : [false, this.seen?.id ?? null, this.seen?.version ?? -1];
  }

  /**
   * Releases the lock if the node names this lock's identifier, without waiting. Returns
   * `[true, holderId, version]` when it did (or `[true, ownId, -1]` when nobody holds the
   * lock), `[false, holderId, version]` when someone else holds it.
   */
  async tryRelease(): Promise<LockAttempt> {
    const zk = await this.client();
    try {
      const { data, stat } = await zk.get(this.path);
      const holder = decodeIdentifier(data);
      this.seen = { id: holder.id, version: stat.version };
      if (holder.id !== this.identifier.id) return [false, holder.id, stat.version];
      this.locked = false;
      await this.deleteIfPresent(zk, stat.version);
      this.seen = null;
      this.maybeAvailable = fired();
      return [true, holder.id, stat.version];
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
      this.locked = false;
      this.seen = null;
      return [true, this.identifier.id, -1];
    }
  }

  /**
   * Releases the lock if this lock holds it (deleting the node only if it still names this
   * identifier), else does nothing. A connection the lock opened itself is closed.
   */
  async release(): Promise<void> {
    try {
      if (this.locked) {
        // Cleared first so the deletion below is not reported as a loss.
        this.locked = false;
        const zk = await this.client();
        try {
          const { data, stat } = await zk.get(this.path);
          if (decodeIdentifier(data).id === this.identifier.id) {
            await this.deleteIfPresent(zk, stat.version);
          }
        } catch (err) {
          if (!isZoottError(err, 'NO_NODE')) throw err;
        }
        this.seen = null;
      }
      this.maybeAvailable = fired();
    } finally {
      await this.close();
    }
  }

  /** Stops listening to the session and closes the lock's own connection, if it made one. */
  async close(): Promise<void> {
    const conn = this.conn;
    this.conn = undefined;
    this.offSession?.();
    this.offSession = undefined;
    if (!conn) return;
    const opened = await conn.catch(() => null);
    if (opened?.owned) await closeCoordinator(opened.coordinator);
  }

  /** `await using lock = new Lock(...)` releases the lock at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  toString(): string {
    return `Lock(${this.path} id=${this.identifier.id} holder=${this.seen?.id ?? '-'})`;
  }

  private client(): Promise<Coordinator> {
    if (!this.conn) {
      const conn = this.given
        ? Promise.resolve<OpenedCoordinator>({ coordinator: this.given, owned: false, conf: null })
        : openCoordinator(this.conf, this.connect);
      this.conn = conn;
      conn.then(
        ({ coordinator }) => {
          if (this.conn === conn) this.offSession = coordinator.onSession((e) => this.onSession(e));
        },
        () => {
          if (this.conn === conn) this.conn = undefined;
        },
      );
    }
    return this.conn.then((c) => c.coordinator);
  }

  private onSession(event: SessionEvent): void {
    // Any session change may have freed the lock or made requests fail: let a waiting
    // acquire look again (it then fails with the session's error if there is no session).
    this.maybeAvailable.fire();
    if ((event.type === 'lost' || event.type === 'closed') && this.locked) {
      if (this.ephemeral) this.locked = false;
      this.reportLost('session');
    }
  }

  private onNodeEvent(generation: number, signal: Signal): void {
    signal.fire();
    if (this.locked && generation === this.heldGeneration) {
      // zkutil treats any change of a held lock node as losing it.
      this.locked = false;
      this.reportLost('node');
    }
  }

  private reportLost(reason: LockLostReason): void {
    if (this.lostReported === this.heldGeneration) return;
    this.lostReported = this.heldGeneration;
    this.onLost?.(reason);
  }

  private async create(zk: Coordinator): Promise<void> {
    const data = encodeIdentifier(this.identifier);
    const options = { ephemeral: this.ephemeral, acl: this.conf.digestAcl() ?? undefined };
    for (let attempt = 0; ; attempt++) {
      try {
        await zk.create(this.path, data, options);
        return;
      } catch (err) {
        if (isZoottError(err, 'NODE_EXISTS')) return;
        // Outcome unknown: the read that follows finds our identifier if the create happened.
        if (isZoottError(err, 'CONNECTION_LOSS') || isZoottError(err, 'OPERATION_TIMEOUT')) return;
        if (isZoottError(err, 'NO_NODE') && attempt === 0) {
          await ensurePath(zk, parentPath(this.path));
          continue;
        }
        throw err;
      }
    }
  }

  private async readHolder(zk: Coordinator): Promise<void> {
    this.generation += 1;
    const generation = this.generation;
    const signal = new Signal();
    try {
      const { data, stat } = await zk.get(this.path, {
        watch: () => this.onNodeEvent(generation, signal),
      });
      const holder = decodeIdentifier(data);
      this.seen = { id: holder.id, version: stat.version };
      this.locked = holder.id === this.identifier.id;
      if (this.locked) this.heldGeneration = generation;
      this.maybeAvailable = signal;
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
      // Deleted between our create and this read: free again, try at once.
      this.seen = null;
      this.locked = false;
      this.maybeAvailable = fired();
    }
  }

  private async deleteIfPresent(zk: Coordinator, version: number): Promise<void> {
    try {
      await zk.delete(this.path, version);
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
    }
  }
}
