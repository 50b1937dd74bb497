import type { WatchEventType, Watcher } from '@zoott/core';
import { isAtOrUnder } from '@zoott/core/internal';
import type { Trigger } from './tree.js';

/**
 * How a watch was set. ZooKeeper's server keeps only data and child watches; the client also
 * remembers `exists` watches on absent nodes, which matters when watches are re-set after a
 * reconnect.
 */
export type WatchKind = 'data' | 'exists' | 'child';

/** One registration, as detached from the server while its connection is down. */
export interface WatchRegistration {
  path: string;
  kind: WatchKind;
  watcher: Watcher;
}

/** A notification for one connection: the event (server path) and the watchers it consumes. */
export interface Delivery<O> {
  owner: O;
  type: WatchEventType;
  path: string;
  watchers: Watcher[];
}

type Table<O> = Map<string, Map<O, Map<Watcher, WatchKind>>>;

/**
 * Server-side watch tables. Watches are one-shot: triggering removes them. Within one trigger,
 * owners are served in the order they first registered on the path, and each watcher function
 * runs once per event even if it was registered several ways (as ZooKeeper's Java client does).
 */
export class WatchManager<O> {
  private readonly dataWatches: Table<O> = new Map();
  private readonly childWatches: Table<O> = new Map();
  /**
   * Persistent recursive watches (`addWatch`), by owner: they stay until removed or until
   * the owner's connection goes, and fire for every change at or under their path except a
   * children change (the child's own event says it).
   */
  private readonly treeWatches = new Map<O, Array<{ root: string; watcher: Watcher }>>();

  addTree(owner: O, root: string, watcher: Watcher): void {
    let list = this.treeWatches.get(owner);
    if (!list) {
      list = [];
      this.treeWatches.set(owner, list);
    }
    list.push({ root, watcher });
  }

  /** Removes the tree watch `watcher`, whichever owner holds it. */
  removeTree(watcher: Watcher): void {
    for (const [owner, list] of this.treeWatches) {
      const kept = list.filter((w) => w.watcher !== watcher);
      if (kept.length > 0) this.treeWatches.set(owner, kept);
      else this.treeWatches.delete(owner);
    }
  }

  add(owner: O, path: string, kind: WatchKind, watcher: Watcher): void {
    const table = kind === 'child' ? this.childWatches : this.dataWatches;
    let byOwner = table.get(path);
    if (!byOwner) {
      byOwner = new Map();
      table.set(path, byOwner);
    }
    let watchers = byOwner.get(owner);
    if (!watchers) {
      watchers = new Map();
      byOwner.set(owner, watchers);
    }
    // A `get` watch on a node also counts as an exists watch; keep the stronger kind.
    if (watchers.get(watcher) !== 'data') watchers.set(watcher, kind);
  }

  /**
   * Removes and returns every one-shot watch of one owner (its connection dropped or its
   * session ended). Its tree watches go too; the client registers those again itself.
   */
  detach(owner: O): WatchRegistration[] {
    this.treeWatches.delete(owner);
    const out: WatchRegistration[] = [];
    for (const table of [this.dataWatches, this.childWatches]) {
      for (const [path, byOwner] of table) {
        const watchers = byOwner.get(owner);
        if (!watchers) continue;
        for (const [watcher, kind] of watchers) out.push({ path, kind, watcher });
        byOwner.delete(owner);
        if (byOwner.size === 0) table.delete(path);
      }
    }
    return out;
  }

  /** Consumes the watches a change fires, in ZooKeeper's order. */
  trigger(trigger: Trigger): Array<Delivery<O>> {
    const sources: Table<O>[] =
      trigger.type === 'childrenChanged'
        ? [this.childWatches]
        : trigger.type === 'deleted'
          ? [this.dataWatches, this.childWatches]
          : [this.dataWatches];
    const perOwner = new Map<O, Set<Watcher>>();
    const setOf = (owner: O) => {
      let set = perOwner.get(owner);
      if (!set) {
        set = new Set();
        perOwner.set(owner, set);
      }
      return set;
    };
    for (const table of sources) {
      const byOwner = table.get(trigger.path);
      if (!byOwner) continue;
      table.delete(trigger.path);
      for (const [owner, watchers] of byOwner) {
        const set = setOf(owner);
        for (const watcher of watchers.keys()) set.add(watcher);
      }
    }
    if (trigger.type !== 'childrenChanged') {
      for (const [owner, list] of this.treeWatches) {
        for (const { root, watcher } of list)
          if (isAtOrUnder(trigger.path, root)) setOf(owner).add(watcher);
      }
    }
    return [...perOwner].map(([owner, watchers]) => ({
      owner,
      type: trigger.type,
      path: trigger.path,
      watchers: [...watchers],
    }));
  }
}
