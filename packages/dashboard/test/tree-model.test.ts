import type { TaskStateName, TreeNode } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { OPEN_ALL_BELOW, stateAfter, TreeModel } from '../src/client/views/tree-model.js';

/** A tree node; `children` below it. */
function node(
  key: string[],
  type: string,
  state: TaskStateName | null,
  children: TreeNode[] = [],
): TreeNode {
  return { key, name: key.at(-1)!, type, state, children };
}

/** a (working) > a|x (completed), a|y (failed) > a|y|z (pending); b (pending). */
function sample(): TreeNode[] {
  return [
    node(['a'], 'fetch', 'working', [
      node(['a', 'x'], 'parse', 'completed'),
      node(['a', 'y'], 'parse', 'failed', [node(['a', 'y', 'z'], 'store', 'pending')]),
    ]),
    node(['b'], 'fetch', 'pending'),
  ];
}

const names = (m: TreeModel, q = '') => m.rows(q).map((n) => n.enc);

describe('the dashboard tree model', () => {
  it('counts the states of every subtree, and over the whole tree', () => {
    const m = new TreeModel();
    m.load(sample());
    expect(m.size).toBe(5);
    expect(m.get(['a'])?.counts).toEqual({ pending: 1, working: 1, completed: 1, failed: 1 });
    expect(m.get('a|y')?.counts).toEqual({ pending: 1, working: 0, completed: 0, failed: 1 });
    expect(m.totals()).toEqual({ pending: 2, working: 1, completed: 1, failed: 1 });
  });

  it('moves a state up through every ancestor, and a no-state node counts nothing', () => {
    const m = new TreeModel();
    m.load(sample());
    m.setState(m.get('a|y|z')!, 'completed');
    expect(m.get('a|y')?.counts).toEqual({ pending: 0, working: 0, completed: 1, failed: 1 });
    expect(m.get('a')?.counts).toEqual({ pending: 0, working: 1, completed: 2, failed: 1 });
    m.setState(m.get('a|y')!, null);
    expect(m.get('a')?.counts).toEqual({ pending: 0, working: 1, completed: 2, failed: 0 });
    expect(m.totals()).toEqual({ pending: 1, working: 1, completed: 2, failed: 0 });
  });

  it('shows a small tree open, and follows collapse all, expand all and single toggles', () => {
    const m = new TreeModel();
    m.load(sample());
    expect(names(m)).toEqual(['a', 'a|x', 'a|y', 'a|y|z', 'b']);
    m.setMode('none');
    expect(names(m)).toEqual(['a', 'b']);
    m.toggle(m.get('a')!, true);
    expect(names(m)).toEqual(['a', 'a|x', 'a|y', 'b']);
    m.setMode('all');
    expect(names(m)).toEqual(['a', 'a|x', 'a|y', 'a|y|z', 'b']);
  });

  it(`opens only the first level of a tree over ${OPEN_ALL_BELOW} tasks`, () => {
    const many = Array.from({ length: OPEN_ALL_BELOW }, (_, i) =>
      node(['big', `c${String(i).padStart(5, '0')}`], 'leaf', 'pending'),
    );
    const m = new TreeModel();
    m.load([node(['big'], 'root', 'working', [node(['big', 'sub'], 'mid', 'pending', many)])]);
    expect(m.size).toBe(OPEN_ALL_BELOW + 2);
    expect(names(m)).toEqual(['big', 'big|sub']);
  });

  it('finds by name or type in any case, showing the ancestors of each match whatever is closed', () => {
    const m = new TreeModel();
    m.load(sample());
    m.setMode('none');
    expect(names(m, ' STORE ')).toEqual(['a', 'a|y', 'a|y|z']);
    expect(names(m, 'x')).toEqual(['a', 'a|x']);
    expect(names(m, 'nothing')).toEqual([]);
  });

  it('replaces one root in name order, and drops a root that is gone with its subtree', () => {
    const m = new TreeModel();
    m.load(sample());
    m.replaceRoot('aa', node(['aa'], 'fetch', 'pending', [node(['aa', 'k'], 't', 'failed')]));
    expect(names(m)).toEqual(['a', 'a|x', 'a|y', 'a|y|z', 'aa', 'aa|k', 'b']);
    m.replaceRoot('a', node(['a'], 'fetch', 'completed'));
    expect(names(m)).toEqual(['a', 'aa', 'aa|k', 'b']);
    expect(m.get('a|y|z')).toBeUndefined();
    m.replaceRoot('aa', null);
    expect(names(m)).toEqual(['a', 'b']);
    expect(m.size).toBe(2);
    expect(m.totals()).toEqual({ pending: 1, working: 0, completed: 1, failed: 0 });
  });

  it('tells which events set a state and which reshape the tree', () => {
    expect(stateAfter('queued')).toBe('pending');
    expect(stateAfter('retried')).toBe('pending');
    expect(stateAfter('started')).toBe('working');
    expect(stateAfter('completed')).toBe('completed');
    expect(stateAfter('failed')).toBe('failed');
    expect(stateAfter('cancelled')).toBeUndefined();
  });
});
