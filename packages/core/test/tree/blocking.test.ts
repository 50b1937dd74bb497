import type { TaskKey } from '@zoott/core';
import {
  BLOCKING_STATES,
  blockingAncestor,
  encodeKey,
  isRunnable,
  type TaskState,
} from '@zoott/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const lookup = (states: Record<string, TaskState>) => (key: TaskKey) => states[encodeKey(key)];

describe('blocking rule', () => {
  it('follows the seed example', () => {
    const stateOf = lookup({ requestFile_alpha: 'pending' });
    const child = ['requestFile_alpha', 'downloadFile_alpha', 'processFile_alpha'];
    expect(isRunnable(child, stateOf)).toBe(false);
    expect(blockingAncestor(child, stateOf)).toEqual(['requestFile_alpha']);
    expect(isRunnable(['requestFile_alpha'], stateOf)).toBe(true);
  });

  it.each<[TaskState | undefined, boolean]>([
    ['pending', false],
    ['working', false],
    ['failed', false],
    ['completed', true],
    [undefined, true],
  ])('a parent in state %s gives runnable=%s', (state, runnable) => {
    const stateOf = (key: TaskKey) => (key.length === 1 ? state : 'pending');
    expect(isRunnable(['p', 'c'], stateOf)).toBe(runnable);
  });

  it('ignores the state of the task itself and of unrelated tasks', () => {
    const stateOf = lookup({ 'a|b': 'working', x: 'pending', 'a|c': 'failed' });
    expect(isRunnable(['a', 'b'], stateOf)).toBe(true);
    expect(isRunnable(['a', 'c', 'd'], stateOf)).toBe(false);
    expect(isRunnable(['a', 'b2', 'd'], stateOf)).toBe(true);
  });

  it('reports the root-most blocker', () => {
    const stateOf = lookup({ a: 'failed', 'a|b': 'pending' });
    expect(blockingAncestor(['a', 'b', 'c'], stateOf)).toEqual(['a']);
  });

  it('agrees with a brute-force model on random trees', () => {
    const name = fc.constantFrom('a', 'b', 'c');
    const key = fc.array(name, { minLength: 1, maxLength: 5 });
    const state = fc.constantFrom<TaskState>('pending', 'working', 'completed', 'failed');
    fc.assert(
      fc.property(fc.array(fc.tuple(key, state), { maxLength: 30 }), key, (entries, target) => {
        const table = new Map(entries.map(([k, s]) => [k.join('|'), s]));
        const stateOf = (k: TaskKey) => table.get(k.join('|'));
        // Model: scan every recorded task; it blocks when it is a strict prefix of the
        // target and its state is one of the blocking ones.
        const blockers = [...table].filter(([k, s]) => {
          const parts = k.split('|');
          return (
            parts.length < target.length &&
            parts.every((p, i) => p === target[i]) &&
            BLOCKING_STATES.has(s)
          );
        });
        expect(isRunnable(target, stateOf)).toBe(blockers.length === 0);
        const reported = blockingAncestor(target, stateOf);
        if (blockers.length === 0) expect(reported).toBeNull();
        else {
          const shortest = Math.min(...blockers.map(([k]) => k.split('|').length));
          expect(reported).toEqual(target.slice(0, shortest));
        }
      }),
      { numRuns: 500 },
    );
  });
});
