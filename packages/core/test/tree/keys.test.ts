import { ZoottError } from '@zoott/core';
import {
  ancestorsOf,
  decodeKey,
  encodeKey,
  isAncestorKey,
  KEY_SEPARATOR,
  keysEqual,
  keyToTreePath,
  parentKey,
  treePathToKey,
  worldRoot,
} from '@zoott/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validKey, validName, validWorld } from './arbitraries.js';

describe('pending-name codec', () => {
  it('joins names with |, as the seed shows', () => {
    const key = ['requestFile_alpha', 'downloadFile_alpha', 'processFile_alpha'];
    expect(KEY_SEPARATOR).toBe('|');
    expect(encodeKey(key)).toBe('requestFile_alpha|downloadFile_alpha|processFile_alpha');
    expect(decodeKey('requestFile_alpha|downloadFile_alpha|processFile_alpha')).toEqual(key);
  });

  it('round-trips every valid key exactly', () => {
    fc.assert(
      fc.property(validKey, (key) => {
        expect(decodeKey(encodeKey(key))).toEqual(key);
      }),
    );
  });

  it('round-trips every valid pending name exactly', () => {
    fc.assert(
      fc.property(validKey, (key) => {
        const encoded = key.join('|');
        expect(encodeKey(decodeKey(encoded))).toBe(encoded);
      }),
    );
  });

  it('is injective: different keys give different names', () => {
    fc.assert(
      fc.property(validKey, validKey, (a, b) => {
        expect(encodeKey(a) === encodeKey(b)).toBe(keysEqual(a, b));
      }),
    );
  });

  it.each([
    ['', 'key', /non-empty string/],
    ['a||b', 'key[1]', /must not be empty/],
    ['|a', 'key[0]', /must not be empty/],
    ['a|', 'key[1]', /must not be empty/],
    ['a|b c', 'key[1]', /space/],
    ['a|..', 'key[1]', /'\.'/],
    ['a/b', 'key[0]', /'\/'/],
  ])('decodeKey rejects %j (field %s)', (encoded, field, reason) => {
    const err = catchError(() => decodeKey(encoded));
    expect(err.code).toBe('INVALID_TASK');
    expect(err.field).toBe(field);
    expect(err.message).toMatch(reason);
  });

  it('rejects an empty key and one deeper than maxDepth', () => {
    expect(catchError(() => encodeKey([])).message).toMatch(/at least one name/);
    expect(catchError(() => encodeKey(['a', 'b', 'c'], { maxDepth: 2 })).message).toMatch(
      /3 levels deep, more than the limit of 2/,
    );
    expect(catchError(() => decodeKey('a|b|c', { maxDepth: 2 })).field).toBe('key');
    expect(catchError(() => encodeKey(['a', 'b|c'])).field).toBe('key[1]');
  });
});

describe('tree-path codec', () => {
  it('maps keys to paths under /zoott_<world>', () => {
    expect(worldRoot('myworld')).toBe('/zoott_myworld');
    expect(keyToTreePath('myworld', ['a', 'b', 'c'])).toBe('/zoott_myworld/a/b/c');
    expect(treePathToKey('myworld', '/zoott_myworld/a/b/c')).toEqual(['a', 'b', 'c']);
    expect(keyToTreePath('myworld', [])).toBe('/zoott_myworld');
    expect(treePathToKey('myworld', '/zoott_myworld')).toEqual([]);
  });

  it('round-trips every valid key and world', () => {
    fc.assert(
      fc.property(validWorld, validKey, (world, key) => {
        const path = keyToTreePath(world, key);
        expect(treePathToKey(world, path)).toEqual(key);
        expect(keyToTreePath(world, treePathToKey(world, path))).toBe(path);
      }),
    );
  });

  it.each([
    ['/zoott_other/a', /not inside the tree \/zoott_w1/],
    ['/zoott_w1x/a', /not inside the tree/],
    ['/zoott_w1/', /key\[0\] "": must not be empty/],
    ['/zoott_w1/a//b', /must not be empty/],
    ['/zoott_w1/a|b', /'\|'/],
    ['zoott_w1/a', /not inside the tree/],
  ])('treePathToKey rejects %j', (path, reason) => {
    const err = catchError(() => treePathToKey('w1', path));
    expect(err.code).toBe('INVALID_TASK');
    expect(err.message).toMatch(reason);
  });

  it('validates the world', () => {
    expect(catchError(() => worldRoot('a b')).field).toBe('world');
    expect(catchError(() => keyToTreePath('p', ['a'])).message).toMatch(/reserved/);
  });
});

describe('ancestry', () => {
  it('lists ancestors root first, nearest last, without the key itself', () => {
    expect(ancestorsOf(['a', 'b', 'c'])).toEqual([['a'], ['a', 'b']]);
    expect(ancestorsOf(['a'])).toEqual([]);
    expect(parentKey(['a', 'b'])).toEqual(['a']);
    expect(parentKey(['a'])).toBeNull();
  });

  it('agrees with isAncestorKey', () => {
    fc.assert(
      fc.property(validKey, fc.array(validName, { maxLength: 3 }), (key, more) => {
        const descendant = [...key, ...more];
        for (const a of ancestorsOf(descendant)) expect(isAncestorKey(a, descendant)).toBe(true);
        expect(ancestorsOf(descendant)).toHaveLength(descendant.length - 1);
        expect(isAncestorKey(descendant, descendant)).toBe(false);
      }),
    );
  });
});

function catchError(fn: () => unknown): ZoottError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ZoottError) return err;
    throw err;
  }
  throw new Error('expected a ZoottError, nothing was thrown');
}
