import { isZoottError } from '@zoott/core';
import { isBackwardLocking } from '@zoott/core/recipes';
import { describe, expect, it } from 'vitest';

describe('isBackwardLocking', () => {
  it.each([
    [[], 'a', false],
    [['a', 'c'], '', true],
    [['a', 'c'], 'b', true],
    [['a', 'c'], 'd', false],
    [['c', 'a'], 'b', true],
  ] as Array<[string[], string, boolean]>)('held %j, locking %j -> %s', (held, key, expected) => {
    expect(isBackwardLocking(held, key)).toBe(expected);
  });

  it('rejects re-locking a held key', () => {
    for (const [held, key] of [
      [['a'], 'a'],
      [['a', 'c'], 'a'],
      [['a', 'c'], 'c'],
    ] as Array<[string[], string]>) {
      let caught: unknown;
      try {
        isBackwardLocking(held, key);
      } catch (err) {
        caught = err;
      }
      expect(isZoottError(caught, 'BAD_ARGUMENTS')).toBe(true);
    }
  });

  it('accepts any iterable and a custom order', () => {
    expect(isBackwardLocking(new Set([2, 10]), 3, (x, y) => x - y)).toBe(true);
    expect(isBackwardLocking(new Set([2, 10]), 11, (x, y) => x - y)).toBe(false);
  });
});
