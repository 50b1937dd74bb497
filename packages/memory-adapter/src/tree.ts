import type { Acl, Stat } from '@zoott/core';
import { baseName, parentPath } from '@zoott/core/internal';

/** One znode. `stat.numChildren` is kept equal to `children.size`. */
export interface ZNode {
  data: Uint8Array;
  acl: Acl[];
  stat: Stat;
  /** Child names in creation order (ZooKeeper gives no order; this keeps runs repeatable). */
  children: Set<string>;
  /**
   * Children ever created here. ZooKeeper persists this as the node's cversion and reports
   * `2 * creates - numChildren` (creates plus deletes); sequential suffixes come from it.
   */
  childCreates: number;
}

/** A change a watch may report, in the order the tree applied it. */
export interface Trigger {
  type: 'created' | 'deleted' | 'dataChanged' | 'childrenChanged';
  path: string;
}

/**
 * One write transaction: every mutation records how to undo itself, so a failed multi (or any
 * failed request) leaves the tree exactly as it was, and the watch triggers are only handed
 * out once the whole transaction stands.
 */
export class Txn {
  readonly undo: Array<() => void> = [];
  readonly triggers: Trigger[] = [];
  constructor(
    readonly zxid: number,
    readonly time: number,
  ) {}

  rollback(): void {
    for (let i = this.undo.length - 1; i >= 0; i--) this.undo[i]?.();
    this.undo.length = 0;
    this.triggers.length = 0;
  }
}

function freshStat(zxid: number, time: number, owner: string | null, dataLength: number): Stat {
  return {
    czxid: zxid,
    mzxid: zxid,
    pzxid: zxid,
    ctime: time,
    mtime: time,
    version: 0,
    cversion: 0,
    aversion: 0,
    ephemeralOwner: owner,
    dataLength,
    numChildren: 0,
  };
}

/** The node table and the primitive mutations; permission and version rules live in the server. */
export class DataTree {
  private readonly nodes = new Map<string, ZNode>();
  /** Ephemeral paths per owning session, in creation order. */
  private readonly ephemerals = new Map<string, Set<string>>();

  constructor(rootAcl: readonly Acl[]) {
    this.nodes.set('/', {
      data: new Uint8Array(0),
      acl: rootAcl.map((a) => ({ ...a })),
      stat: freshStat(0, 0, null, 0),
      children: new Set(),
      childCreates: 0,
    });
  }

  get(path: string): ZNode | undefined {
    return this.nodes.get(path);
  }

  ephemeralsOf(sessionId: string): string[] {
    return [...(this.ephemerals.get(sessionId) ?? [])];
  }

  /** Adds a node under an existing parent; the caller has checked everything else. */
  create(txn: Txn, path: string, data: Uint8Array, acl: Acl[], owner: string | null): void {
    const parentName = parentPath(path);
    const parent = this.mustGet(parentName);
    const name = baseName(path);
    const before = { cversion: parent.stat.cversion, pzxid: parent.stat.pzxid };
    this.nodes.set(path, {
      data,
      acl,
      stat: freshStat(txn.zxid, txn.time, owner, data.length),
      children: new Set(),
      childCreates: 0,
    });
    parent.children.add(name);
    parent.childCreates += 1;
    parent.stat.cversion += 1;
    parent.stat.pzxid = txn.zxid;
    parent.stat.numChildren = parent.children.size;
    if (owner !== null) this.trackEphemeral(owner, path);
    txn.undo.push(() => {
      this.nodes.delete(path);
      parent.children.delete(name);
      parent.childCreates -= 1;
      parent.stat.cversion = before.cversion;
      parent.stat.pzxid = before.pzxid;
      parent.stat.numChildren = parent.children.size;
      if (owner !== null) this.ephemerals.get(owner)?.delete(path);
    });
    txn.triggers.push({ type: 'created', path }, { type: 'childrenChanged', path: parentName });
  }

  /** Removes a childless node; the caller has checked everything else. */
  delete(txn: Txn, path: string): void {
    const node = this.mustGet(path);
    const parentName = parentPath(path);
    const parent = this.mustGet(parentName);
    const name = baseName(path);
    const before = { cversion: parent.stat.cversion, pzxid: parent.stat.pzxid };
    const owner = node.stat.ephemeralOwner;
    // Re-inserting must restore the parent's child order too, so remember the whole list.
    const siblings = [...parent.children];
    this.nodes.delete(path);
    parent.children.delete(name);
    parent.stat.cversion += 1;
    parent.stat.pzxid = txn.zxid;
    parent.stat.numChildren = parent.children.size;
    const ownerSet = owner !== null ? this.ephemerals.get(owner) : undefined;
    const ownerList = ownerSet ? [...ownerSet] : undefined;
    ownerSet?.delete(path);
    txn.undo.push(() => {
      this.nodes.set(path, node);
      parent.children.clear();
      for (const sibling of siblings) parent.children.add(sibling);
      parent.stat.cversion = before.cversion;
      parent.stat.pzxid = before.pzxid;
      parent.stat.numChildren = parent.children.size;
      if (owner !== null && ownerList) this.ephemerals.set(owner, new Set(ownerList));
    });
    txn.triggers.push({ type: 'deleted', path }, { type: 'childrenChanged', path: parentName });
  }

  setData(txn: Txn, path: string, data: Uint8Array): void {
    const node = this.mustGet(path);
    const before = { data: node.data, stat: { ...node.stat } };
    node.data = data;
    node.stat.version += 1;
    node.stat.mzxid = txn.zxid;
    node.stat.mtime = txn.time;
    node.stat.dataLength = data.length;
    txn.undo.push(() => {
      node.data = before.data;
      node.stat = before.stat;
    });
    txn.triggers.push({ type: 'dataChanged', path });
  }

  /** Replaces the ACL and bumps aversion; ZooKeeper fires no watch for this. */
  setAcl(txn: Txn, path: string, acl: Acl[]): void {
    const node = this.mustGet(path);
    const before = { acl: node.acl, aversion: node.stat.aversion };
    node.acl = acl;
    node.stat.aversion += 1;
    txn.undo.push(() => {
      node.acl = before.acl;
      node.stat.aversion = before.aversion;
    });
  }

  private trackEphemeral(owner: string, path: string): void {
    let set = this.ephemerals.get(owner);
    if (!set) {
      set = new Set();
      this.ephemerals.set(owner, set);
    }
    set.add(path);
  }

  private mustGet(path: string): ZNode {
    const node = this.nodes.get(path);
    if (!node) throw new Error(`memory tree invariant broken: ${path} is missing`);
    return node;
  }
}
