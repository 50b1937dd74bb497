import type { TaskKey } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { readNode, shapes } from './corrupt.js';
import { codeOf } from './errors.js';

/** A tree node found by a walk. `type` is read only when asked for. */
export interface WalkedNode {
  key: TaskKey;
  name: string;
  type?: string;
  data?: unknown;
  /** Why its data could not be read (reported to the context's `onCorrupt` too). */
  corrupt?: string;
}

/**
 * Every node below `from` (not `from` itself), level by level: each level's listings go out
 * together, so a walk costs one round trip per level, not per node. `readData(node)` says
 * whether a node's data (name, type, data) must be read. A node whose data is not a tree
 * node is reported as corrupt and kept, without a type (so no type pattern matches it).
 */
export async function walkTree(
  ctx: EngineContext,
  from: TaskKey,
  readData: (key: TaskKey) => boolean,
): Promise<WalkedNode[]> {
  const out: WalkedNode[] = [];
  let level: TaskKey[] = [from];
  while (level.length > 0) {
    const listed = await Promise.all(
      level.map((key) =>
        ctx.coordinator
          .children(ctx.layout.treePath(key))
          .then((names) => names.map((n) => [...key, n] as TaskKey))
          .catch((err) => (codeOf(err) === 'NO_NODE' ? [] : Promise.reject(err))),
      ),
    );
    const next = listed.flat().sort(compareKeys);
    await Promise.all(
      next.map(async (key) => {
        const node: WalkedNode = { key, name: key[key.length - 1]! };
        out.push(node);
        if (!readData(key)) return;
        const path = ctx.layout.treePath(key);
        try {
          const got = await ctx.coordinator.get(path);
          const stored = readNode<{ type?: unknown; data?: unknown } | null>(
            got.data,
            path,
            shapes.tree,
            (bad) => {
              node.corrupt = bad.reason;
              ctx.onCorrupt(bad);
            },
          );
          if (stored && typeof stored.type === 'string') node.type = stored.type;
          if (stored && stored.data !== undefined && stored.data !== null) node.data = stored.data;
        } catch (err) {
          if (codeOf(err) !== 'NO_NODE') throw err;
        }
      }),
    );
    level = next;
  }
  return out;
}

export function compareKeys(a: TaskKey, b: TaskKey): number {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}
