import type { TreeNode } from '@zoott/core';
import { topNodePath } from '@zoott/core/internal';
import { type Colors, paintState } from './colors.js';

/**
 * Draws the task tree with box characters, one task per line: `name (type) state`.
 * Children are drawn in the order given (the engine sorts them by key).
 */
export function renderTree(
  world: string,
  nodes: readonly TreeNode[],
  colours: Colors,
  annotate?: (node: TreeNode) => string,
): string {
  const lines = [colours.bold(topNodePath(world))];
  const walk = (list: readonly TreeNode[], prefix: string) => {
    list.forEach((n, i) => {
      const last = i === list.length - 1;
      lines.push(
        `${prefix}${last ? '└── ' : '├── '}${n.name} ${colours.dim(`(${n.type || '?'})`)} ${paintState(colours, n.state)}${n.corrupt !== undefined ? ` ${colours.red('corrupt')}` : ''}${annotate ? annotate(n) : ''}`,
      );
      walk(n.children, prefix + (last ? '    ' : '│   '));
    });
  };
  walk(nodes, '');
  if (nodes.length === 0) lines.push(colours.dim('(no tasks)'));
  return lines.join('\n');
}

/** Tasks per state over a whole tree. */
export function countTree(nodes: readonly TreeNode[]): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (list: readonly TreeNode[]) => {
    for (const n of list) {
      const k = n.state ?? 'cancelled';
      out[k] = (out[k] ?? 0) + 1;
      walk(n.children);
    }
  };
  walk(nodes);
  return out;
}

/** The tree as plain JSON: keys as `a|b|c` strings, children nested. */
export function treeToJson(nodes: readonly TreeNode[]): unknown[] {
  return nodes.map((n) => ({
    key: n.key.join('|'),
    name: n.name,
    type: n.type,
    state: n.state,
    ...(n.corrupt !== undefined ? { corrupt: n.corrupt } : {}),
    children: treeToJson(n.children),
  }));
}
