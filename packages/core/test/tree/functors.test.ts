import { ZoottError } from '@zoott/core';
import { childNamesFor, defaultNameFunctor } from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';

function thrown(fn: () => unknown): ZoottError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ZoottError) return err;
    throw err;
  }
  throw new Error('expected a ZoottError');
}

describe('name functors', () => {
  it('defaults to the child name (identity)', () => {
    expect(defaultNameFunctor('requestFile_a', 'download')).toBe('download');
    expect(childNamesFor([{ name: 'p1' }], 'child')).toEqual(['child']);
    expect(childNamesFor([], 'child')).toEqual([]);
  });

  it('applies a functor per parent, in order', () => {
    const names = childNamesFor(
      [{ name: 'requestFile_alpha' }, { name: 'requestFile_beta' }],
      'downloadFile',
      (parent, child) => `${child}_${parent.split('_')[1]}`,
    );
    expect(names).toEqual(['downloadFile_alpha', 'downloadFile_beta']);
  });

  it('reports duplicates from the default functor with a hint', () => {
    const err = thrown(() => childNamesFor([{ name: 'a' }, { name: 'b' }], 'x'));
    expect(err.code).toBe('INVALID_TASK');
    expect(err.field).toBe('name');
    expect(err.message).toMatch(/"x" given for both parent "a" and parent "b".*nameFunctor/);
  });

  it('reports a functor that returns a duplicate, an invalid name or a non-string', () => {
    const parents = [{ name: 'a' }, { name: 'b' }];
    const dup = thrown(() => childNamesFor(parents, 'x', () => 'same'));
    expect(dup.field).toBe('nameFunctor');
    expect(dup.message).toMatch(/"same" given for both/);

    const invalid = thrown(() => childNamesFor(parents, 'x', (p, c) => `${p}/${c}`));
    expect(invalid.field).toBe('nameFunctor');
    expect(invalid.message).toMatch(/nameFunctor "a\/x": must not contain '\/'/);

    const notString = thrown(() =>
      childNamesFor(parents, 'x', (() => 42) as unknown as (p: string, c: string) => string),
    );
    expect(notString.message).toMatch(/must be a string, got number/);
  });

  it('wraps a functor that throws', () => {
    const boom = new Error('boom');
    const err = thrown(() =>
      childNamesFor([{ name: 'a' }], 'x', () => {
        throw boom;
      }),
    );
    expect(err.field).toBe('nameFunctor');
    expect(err.message).toMatch(/nameFunctor threw for parent "a": boom/);
    expect(err.cause).toBe(boom);
  });

  it('validates the child name itself', () => {
    expect(thrown(() => childNamesFor([{ name: 'a' }], 'bad name')).field).toBe('name');
  });
});
