import { ZoottError } from '@zoott/core';
import { validatePath } from '@zoott/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/**
 * The path rules as the straightforward reading of them: split into segments, then one
 * regular expression for the characters ZooKeeper's PathUtils rejects. validatePath (one pass,
 * no allocation) must say exactly what this says, for every string.
 */
function referenceFault(path: string): string | null {
  if (path.length === 0) return 'a path must be a non-empty string';
  if (path[0] !== '/') return "a path must start with '/'";
  if (path === '/') return null;
  if (path.endsWith('/')) return "a path must not end with '/'";
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') return 'empty segment';
    if (segment === '.' || segment === '..') return 'relative segments are not allowed';
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters to reject
  if (/[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(path))
    return 'contains a character ZooKeeper rejects';
  return null;
}

const FAULTS = [
  'a path must be a non-empty string',
  "a path must start with '/'",
  "a path must not end with '/'",
  'empty segment',
  'relative segments are not allowed',
  'contains a character ZooKeeper rejects',
];

function faultOf(path: string): string | null {
  try {
    validatePath(path, 'get');
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(ZoottError);
    const e = err as ZoottError;
    expect(e.code).toBe('INVALID_PATH');
    expect({ path: e.path, op: e.op }).toEqual({ path, op: 'get' });
    // The message is the one the fault makes: which fault it is, is what the caller compares.
    const fault = FAULTS.find(
      (f) =>
        e.message ===
        new ZoottError('INVALID_PATH', `${JSON.stringify(path)}: ${f}`, { path, op: 'get' })
          .message,
    );
    expect(fault, e.message).toBeDefined();
    return fault!;
  }
}

describe('validatePath', () => {
  it('names the first fault of a path, as the rules read', () => {
    const cases: Array<[string, string | null]> = [
      ['/', null],
      ['/a', null],
      ['/a/b.c/..d/...', null],
      ['/zoott_p/w/b00/k-0000000001', null],
      ['', 'a path must be a non-empty string'],
      ['a/b', "a path must start with '/'"],
      ['/a/', "a path must not end with '/'"],
      ['//a', 'empty segment'],
      ['/a//b', 'empty segment'],
      ['/a/./b', 'relative segments are not allowed'],
      ['/a/..', 'relative segments are not allowed'],
      ['/.', 'relative segments are not allowed'],
      ['/a\u0000b', 'contains a character ZooKeeper rejects'],
      ['/a\u009f', 'contains a character ZooKeeper rejects'],
      ['/\ud83d\ude00', 'contains a character ZooKeeper rejects'],
      ['/\ufff0', 'contains a character ZooKeeper rejects'],
      ['/\u00a0\uf900\uffef', null],
      // A segment's fault comes before a character's, wherever each is.
      ['/\u0001/../x', 'relative segments are not allowed'],
      ['/\u0001//x', 'empty segment'],
    ];
    for (const [path, fault] of cases) expect(faultOf(path), JSON.stringify(path)).toBe(fault);
    expect(() => validatePath(undefined as unknown as string)).toThrow(
      'a path must be a non-empty string',
    );
  });

  it('agrees with the plain reading of the rules on any string', () => {
    const unit = fc.constantFrom(
      '/',
      '/',
      '.',
      'a',
      'z',
      '\u0000',
      '\u001f',
      '\u0020',
      '\u007e',
      '\u007f',
      '\u009f',
      '\u00a0',
      '\ud7ff',
      '\ud800',
      '\udfff',
      '\uf8ff',
      '\uf900',
      '\uffef',
      '\ufff0',
      '\uffff',
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 12 }), (units) => {
        const path = units.join('');
        expect(faultOf(path)).toBe(referenceFault(path));
      }),
      { numRuns: 5_000 },
    );
  });
});
