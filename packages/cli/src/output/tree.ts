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
    list.forEach((node, index) => {
      const last = index === list.length - 1;
      lines.push(
        `${prefix}${last ? '└── ' : '├── '}${node.name} ${colours.dim(`(${node.type || '?'})`)} ${paintState(colours, node.state)}${node.corrupt !== undefined ? ` ${colours.red('corrupt')}` : ''}${annotate ? annotate(node) : ''}`,
      );
      walk(node.children, prefix + (last ? '    ' : '│   '));
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
    for (const node of list) {
      const state = node.state ?? 'cancelled';
      out[state] = (out[state] ?? 0) + 1;
      walk(node.children);
    }
  };
  walk(nodes);
  return out;
}

/** The tree as plain JSON: keys as `a|b|c` strings, children nested. */
export function treeToJson(nodes: readonly TreeNode[]): unknown[] {
  return nodes.map((node) => ({
    key: node.key.join('|'),
    name: node.name,
    type: node.type,
    state: node.state,
    ...(node.corrupt !== undefined ? { corrupt: node.corrupt } : {}),
    children: treeToJson(node.children),
  }));
}
