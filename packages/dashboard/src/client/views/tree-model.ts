// The task tree as the page keeps it, apart from drawing: items with parent links and the
// state counts of their subtrees, which rows are open, and which rows a search shows. Pure
// (no DOM), so it is unit-tested in Node.
import type { EngineEvent, TaskKey, TreeNode } from '@zoott/core';
import { encodeKey, STATES, type State } from '../task-states.js';

/** Counts of each state. */
export type Counts = Record<State, number>;

/** A tree node as the page keeps it: parent link, depth and counts of its subtree. */
export interface Item {
  key: TaskKey;
  enc: string;
  name: string;
  type: string;
  state: State | null;
  parent: Item | null;
  depth: number;
  children: Item[];
  /** States of this node and everything below it. */
  counts: Counts;
}

/** Trees up to this size open fully at first; bigger ones show two levels. */
export const OPEN_ALL_BELOW = 2000;

/** The state an event of each type leaves its task in; other events change the tree's shape. */
const EVENT_STATE: Partial<Record<EngineEvent['type'], State>> = {
  queued: 'pending',
  retried: 'pending',
  started: 'working',
  completed: 'completed',
  failed: 'failed',
};

/** The state an event leaves its task in, or `undefined` for an event that reshapes the tree. */
export function stateAfter(type: EngineEvent['type']): State | undefined {
  return EVENT_STATE[type];
}

export const zeroCounts = (): Counts => ({ pending: 0, working: 0, completed: 0, failed: 0 });

/** The tree of one world: items by encoded key, the roots in name order, and open rows. */
export class TreeModel {
  private readonly index = new Map<string, Item>();
  private roots: Item[] = [];
  /** Rows the user opened or closed, overriding the mode. */
  private readonly toggled = new Map<string, boolean>();
  private mode: 'auto' | 'all' | 'none' = 'auto';

  /** How many tasks the tree holds. */
  get size(): number {
    return this.index.size;
  }

  /** The item of a key, if the tree holds it. */
  get(key: TaskKey | string): Item | undefined {
    return this.index.get(typeof key === 'string' ? key : encodeKey(key));
  }

  /** Replaces the whole tree with what the server sent. */
  load(tree: readonly TreeNode[]): void {
    this.index.clear();
    this.roots = tree.map((t) => this.build(t, null));
  }

  /**
   * Replaces one root's subtree (after it gained or lost nodes), keeping the roots in name
   * order; `null` removes it (the root is gone).
   */
  replaceRoot(name: string, root: TreeNode | null): void {
    const old = this.index.get(name);
    if (old) this.forget(old);
    this.roots = this.roots.filter((r) => r.enc !== name);
    if (!root) return;
    const item = this.build(root, null);
    const at = this.roots.findIndex((r) => r.name > name);
    if (at < 0) this.roots.push(item);
    else this.roots.splice(at, 0, item);
  }

  /** Moves a task to `state`, keeping the counts of every subtree above it right. */
  setState(item: Item, state: State | null): void {
    if (item.state === state) return;
    for (let a: Item | null = item; a; a = a.parent) {
      if (item.state) a.counts[item.state]--;
      if (state) a.counts[state]++;
    }
    item.state = state;
  }

  /** Opens or closes every row ('all', 'none'), forgetting single toggles. */
  setMode(mode: 'all' | 'none'): void {
    this.mode = mode;
    this.toggled.clear();
  }

  /** Opens or closes one row. */
  toggle(item: Item, open: boolean): void {
    this.toggled.set(item.enc, open);
  }

  /** Whether a row shows its children (without a search). */
  isOpen(item: Item): boolean {
    const toggled = this.toggled.get(item.enc);
    if (toggled !== undefined) return toggled;
    if (this.mode !== 'auto') return this.mode === 'all';
    return this.index.size <= OPEN_ALL_BELOW || item.depth < 1;
  }

  /**
   * The rows to show, in tree order: the open ones, or with a search (name or type, any case)
   * the matches and their ancestors, open whatever their toggles say.
   */
  rows(query: string): Item[] {
    const out: Item[] = [];
    const needle = query.trim().toLowerCase();
    let shown: Set<Item> | null = null;
    if (needle) {
      shown = new Set();
      for (const item of this.index.values()) {
        if (item.name.toLowerCase().includes(needle) || item.type.toLowerCase().includes(needle))
          for (let a: Item | null = item; a && !shown.has(a); a = a.parent) shown.add(a);
      }
    }
    const walk = (list: Item[]) => {
      for (const item of list) {
        if (shown && !shown.has(item)) continue;
        out.push(item);
        if (item.children.length > 0 && (shown || this.isOpen(item))) walk(item.children);
      }
    };
    walk(this.roots);
    return out;
  }

  /** Counts of each state over the whole tree. */
  totals(): Counts {
    const total = zeroCounts();
    for (const root of this.roots) for (const state of STATES) total[state] += root.counts[state];
    return total;
  }

  private build(node: TreeNode, parent: Item | null): Item {
    const item: Item = {
      key: node.key,
      enc: encodeKey(node.key),
      name: node.name,
      type: node.type,
      state: node.state,
      parent,
      depth: node.key.length - 1,
      children: [],
      counts: zeroCounts(),
    };
    if (item.state) item.counts[item.state]++;
    this.index.set(item.enc, item);
    for (const childNode of node.children) {
      const child = this.build(childNode, item);
      item.children.push(child);
      for (const state of STATES) item.counts[state] += child.counts[state];
    }
    return item;
  }

  private forget(item: Item): void {
    this.index.delete(item.enc);
    for (const child of item.children) this.forget(child);
  }
}
