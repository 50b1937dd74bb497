import {
  type Acl,
  OPEN_ACL,
  type Op,
  Perms,
  READ_ACL,
  type Stat,
  type WatchEventType,
  type Watcher,
} from '@zoott/core';
import { multiCodes } from '@zoott/core/internal';
import { type AuthId, aclAllows, CLIENT_IP, fixupAcl, redactDigests } from './acl-rules.js';
import type { Clock } from './clock.js';
import { MultiRefusal, ServerRefusal } from './refusal.js';
import { DataTree, Txn } from './tree.js';
import { type Delivery, WatchManager, type WatchRegistration } from './watches.js';

/** What the server needs from the client end of a session. */
export interface SessionPeer {
  /** A watch fired: queue it for delivery (path is the server path). */
  notify(type: WatchEventType, path: string, watchers: Watcher[]): void;
  /**
   * The session ended on the server. `observed` is true when the client learns it now
   * (it is connected, or its own session timer ran out while disconnected).
   */
  expired(observed: boolean): void;
}

export interface Session {
  readonly id: string;
  readonly timeoutMs: number;
  readonly authIds: AuthId[];
  readonly peer: SessionPeer;
  alive: boolean;
  connected: boolean;
  /** Pending expiry while disconnected (only when the server runs timers). */
  timer: unknown;
}

/** A create, as a single request or inside a multi. */
export interface CreateRequest {
  path: string;
  data: Uint8Array;
  ephemeral: boolean;
  sequential: boolean;
  acl: readonly Acl[];
}

export type MultiResult =
  | { op: 'create'; path: string }
  | { op: 'set'; stat: Stat }
  | { op: 'delete' }
  | { op: 'check' };

export interface ServerStateOptions {
  maxDataBytes: number;
  clock: Clock;
  /** Whether session timeouts are enforced with clock timers. */
  timers: boolean;
  defaultSessionTimeoutMs: number;
}

/** How a client was opened; kept so `renewSession()` can open an identical one. */
export interface ClientSettings {
  chroot: string;
  sessionTimeoutMs: number;
  auth: Array<{ scheme: string; auth: string }>;
  defaultAcl: readonly Acl[];
}

let serverCount = 0;

const copyStat = (stat: Stat): Stat => ({ ...stat });

/**
 * The whole server: one tree, its sessions and watches, a global zxid. Every request runs
 * synchronously to completion, which is what makes the adapter deterministic: there is never
 * more than one transaction in flight.
 */
export class ServerState {
  readonly tree = new DataTree(OPEN_ACL);
  readonly watches = new WatchManager<Session>();
  readonly sessions = new Map<string, Session>();
  zxid = 0;
  private sessionCount = 0;
  /** High byte of every session id, like ZooKeeper's server id: tells servers' sessions apart. */
  private readonly serverByte: number;

  constructor(readonly options: ServerStateOptions) {
    serverCount = (serverCount % 255) + 1;
    this.serverByte = serverCount;
    // The system nodes every ZooKeeper 3.5+ tree has, so listings of '/' look the same.
    const txn = this.begin();
    this.tree.create(txn, '/zookeeper', new Uint8Array(0), [...OPEN_ACL], null);
    this.tree.create(txn, '/zookeeper/quota', new Uint8Array(0), [...OPEN_ACL], null);
    this.tree.create(txn, '/zookeeper/config', new Uint8Array(0), [...READ_ACL], null);
  }

  // ---- sessions -------------------------------------------------------------------------

  openSession(peer: SessionPeer, timeoutMs: number, authIds: AuthId[]): Session {
    this.sessionCount += 1;
    const id = ((BigInt(this.serverByte) << 56n) | BigInt(this.sessionCount))
      .toString(16)
      .padStart(16, '0');
    const session: Session = {
      id,
      timeoutMs,
      authIds: [{ scheme: 'ip', id: CLIENT_IP }, ...authIds],
      peer,
      alive: true,
      connected: true,
      timer: undefined,
    };
    this.sessions.set(id, session);
    return session;
  }

  /** Ends a session the way ZooKeeper's closeSession does: its ephemerals go in one transaction. */
  endSession(session: Session): void {
    if (!session.alive) return;
    session.alive = false;
    this.sessions.delete(session.id);
    // The ending session hears nothing more, not even about its own ephemerals.
    this.watches.detach(session);
    const txn = this.begin();
    for (const path of this.tree.ephemeralsOf(session.id)) this.tree.delete(txn, path);
    this.commit(txn);
  }

  /** A client's close(): the session ends at once, even while disconnected. */
  closeSession(session: Session): void {
    this.stopTimer(session);
    this.endSession(session);
  }

  /**
   * Server-side expiry. A connected client hears it at once; a disconnected one when it
   * reconnects, or when its own session timer runs out (the timer is left running for that).
   */
  expire(session: Session): void {
    if (!session.alive) return;
    this.endSession(session);
    session.peer.expired(session.connected);
  }

  stopTimer(session: Session): void {
    if (session.timer !== undefined) this.options.clock.clearTimeout(session.timer);
    session.timer = undefined;
  }

  connectionDropped(session: Session): WatchRegistration[] {
    session.connected = false;
    if (this.options.timers) {
      session.timer = this.options.clock.setTimeout(() => {
        session.timer = undefined;
        this.endSession(session);
        session.peer.expired(true);
      }, session.timeoutMs);
    }
    return this.watches.detach(session);
  }

  /**
   * The connection is back: re-set the watches the client kept, firing those whose change
   * happened while it was away (ZooKeeper's setWatches, relative to the last zxid it saw).
   */
  connectionRestored(session: Session, watches: WatchRegistration[], lastZxid: number): void {
    session.connected = true;
    this.stopTimer(session);
    const fired: Array<{ type: WatchEventType; reg: WatchRegistration }> = [];
    for (const reg of watches) {
      const node = this.tree.get(reg.path);
      let type: WatchEventType | null = null;
      if (reg.kind === 'exists') type = node ? 'created' : null;
      else if (!node) type = 'deleted';
      else if (reg.kind === 'data' && node.stat.mzxid > lastZxid) type = 'dataChanged';
      else if (reg.kind === 'child' && node.stat.pzxid > lastZxid) type = 'childrenChanged';
      if (type) fired.push({ type, reg });
      else this.watches.add(session, reg.path, reg.kind, reg.watcher);
    }
    for (const { type, reg } of fired) session.peer.notify(type, reg.path, [reg.watcher]);
  }

  // ---- reads ----------------------------------------------------------------------------

  getData(session: Session, path: string, watcher?: Watcher): { data: Uint8Array; stat: Stat } {
    const node = this.node(path);
    this.checkPerm(session, node.acl, Perms.READ);
    if (watcher) this.watches.add(session, path, 'data', watcher);
    return { data: node.data.slice(), stat: copyStat(node.stat) };
  }

  exists(session: Session, path: string, watcher?: Watcher): Stat | null {
    const node = this.tree.get(path);
    if (watcher) this.watches.add(session, path, node ? 'data' : 'exists', watcher);
    return node ? copyStat(node.stat) : null;
  }

  getChildren(
    session: Session,
    path: string,
    watcher?: Watcher,
  ): { children: string[]; stat: Stat } {
    const node = this.node(path);
    this.checkPerm(session, node.acl, Perms.READ);
    if (watcher) this.watches.add(session, path, 'child', watcher);
    return { children: [...node.children], stat: copyStat(node.stat) };
  }

  /** READ or ADMIN may read an ACL; without ADMIN digest hashes are masked (ZooKeeper 3.6+). */
  getAcl(session: Session, path: string): { acl: Acl[]; stat: Stat } {
    const node = this.node(path);
    this.checkPerm(session, node.acl, Perms.READ | Perms.ADMIN);
    const acl = aclAllows(node.acl, Perms.ADMIN, session.authIds)
      ? node.acl.map((a) => ({ ...a }))
      : redactDigests(node.acl);
    return { acl, stat: copyStat(node.stat) };
  }

  // ---- writes ---------------------------------------------------------------------------

  create(session: Session, req: CreateRequest): string {
    return this.write((txn) => this.applyCreate(txn, session, req));
  }

  delete(session: Session, path: string, version: number): void {
    this.write((txn) => this.applyDelete(txn, session, path, version));
  }

  setData(session: Session, path: string, data: Uint8Array, version: number): Stat {
    return this.write((txn) => this.applySet(txn, session, path, data, version));
  }

  setAcl(session: Session, path: string, acl: readonly Acl[], version: number): Stat {
    return this.write((txn) => {
      // ZooKeeper's order: the new ACL is checked before the node is even looked up.
      const fixed = fixupAcl(acl, session.authIds);
      const node = this.node(path);
      this.checkPerm(session, node.acl, Perms.ADMIN);
      this.checkVersion(node.stat.aversion, version);
      this.tree.setAcl(txn, path, fixed);
      return copyStat(node.stat);
    });
  }

  /** All or nothing. The ops are already validated (paths, sizes) by the client. */
  multi(session: Session, ops: readonly Op[]): MultiResult[] {
    const txn = this.begin();
    const results: MultiResult[] = [];
    for (const [index, op] of ops.entries()) {
      try {
        results.push(this.applyOp(txn, session, op));
      } catch (err) {
        txn.rollback();
        if (!(err instanceof ServerRefusal)) throw err;
        throw new MultiRefusal(
          err.code,
          err.reason,
          index,
          multiCodes(ops.length, index, err.code),
        );
      }
    }
    this.commit(txn);
    return results;
  }

  // ---- internals ------------------------------------------------------------------------

  private applyOp(txn: Txn, session: Session, op: Op): MultiResult {
    switch (op.op) {
      case 'create':
        return {
          op: 'create',
          path: this.applyCreate(txn, session, {
            path: op.path,
            data: op.data ?? new Uint8Array(0),
            ephemeral: op.ephemeral ?? false,
            sequential: op.sequential ?? false,
            acl: op.acl ?? OPEN_ACL,
          }),
        };
      case 'set':
        return { op: 'set', stat: this.applySet(txn, session, op.path, op.data, op.version ?? -1) };
      case 'delete':
        this.applyDelete(txn, session, op.path, op.version ?? -1);
        return { op: 'delete' };
      case 'check': {
        const node = this.node(op.path);
        this.checkPerm(session, node.acl, Perms.READ);
        this.checkVersion(node.stat.version, op.version);
        return { op: 'check' };
      }
    }
  }

  /** ZooKeeper's check order: ACL, parent, CREATE permission, existence, ephemeral parent. */
  private applyCreate(txn: Txn, session: Session, req: CreateRequest): string {
    this.checkSize(req.data);
    const acl = fixupAcl(req.acl, session.authIds);
    const parentName =
      req.path.lastIndexOf('/') === 0 ? '/' : req.path.slice(0, req.path.lastIndexOf('/'));
    const parent = this.tree.get(parentName);
    if (!parent) throw new ServerRefusal('NO_NODE', 'the parent node does not exist');
    this.checkPerm(session, parent.acl, Perms.CREATE);
    const path = req.sequential
      ? `${req.path}${String(parent.childCreates).padStart(10, '0')}`
      : req.path;
    if (this.tree.get(path)) throw new ServerRefusal('NODE_EXISTS');
    if (parent.stat.ephemeralOwner !== null) {
      throw new ServerRefusal('NO_CHILDREN_FOR_EPHEMERALS', 'the parent node is ephemeral');
    }
    this.tree.create(txn, path, req.data.slice(), acl, req.ephemeral ? session.id : null);
    return path;
  }

  /** ZooKeeper's check order: parent, DELETE permission on it, node, version, children. */
  private applyDelete(txn: Txn, session: Session, path: string, version: number): void {
    if (path === '/') throw new ServerRefusal('BAD_ARGUMENTS', 'the root node cannot be deleted');
    const parentName = path.lastIndexOf('/') === 0 ? '/' : path.slice(0, path.lastIndexOf('/'));
    const parent = this.tree.get(parentName);
    if (!parent) throw new ServerRefusal('NO_NODE', 'the parent node does not exist');
    this.checkPerm(session, parent.acl, Perms.DELETE);
    const node = this.node(path);
    this.checkVersion(node.stat.version, version);
    if (node.children.size > 0) {
      throw new ServerRefusal('NOT_EMPTY', `it has ${node.children.size} children`);
    }
    this.tree.delete(txn, path);
  }

  private applySet(
    txn: Txn,
    session: Session,
    path: string,
    data: Uint8Array,
    version: number,
  ): Stat {
    this.checkSize(data);
    const node = this.node(path);
    this.checkPerm(session, node.acl, Perms.WRITE);
    this.checkVersion(node.stat.version, version);
    this.tree.setData(txn, path, data.slice());
    return copyStat(node.stat);
  }

  /** Runs one write as a transaction: applied whole, or rolled back and rethrown. */
  private write<T>(apply: (txn: Txn) => T): T {
    const txn = this.begin();
    try {
      const result = apply(txn);
      this.commit(txn);
      return result;
    } catch (err) {
      txn.rollback();
      throw err;
    }
  }

  /** Every write request takes a zxid, even one that fails (ZooKeeper logs an error txn). */
  private begin(): Txn {
    this.zxid += 1;
    return new Txn(this.zxid, this.options.clock.now());
  }

  /** Hands the transaction's watch triggers out, in the order the changes were applied. */
  private commit(txn: Txn): void {
    const deliveries: Array<Delivery<Session>> = [];
    for (const trigger of txn.triggers) deliveries.push(...this.watches.trigger(trigger));
    for (const delivery of deliveries)
      delivery.owner.peer.notify(delivery.type, delivery.path, delivery.watchers);
  }

  private node(path: string) {
    const node = this.tree.get(path);
    if (!node) throw new ServerRefusal('NO_NODE');
    return node;
  }

  private checkPerm(session: Session, acl: readonly Acl[], perm: number): void {
    if (!aclAllows(acl, perm, session.authIds)) throw new ServerRefusal('NO_AUTH');
  }

  private checkVersion(current: number, expected: number): void {
    if (expected !== -1 && expected !== current) {
      throw new ServerRefusal('BAD_VERSION', `expected version ${expected}, node is at ${current}`);
    }
  }

  private checkSize(data: Uint8Array): void {
    if (data.length > this.options.maxDataBytes) {
      throw new ServerRefusal(
        'DATA_TOO_LARGE',
        `${data.length} bytes exceed the limit of ${this.options.maxDataBytes}`,
      );
    }
  }
}
