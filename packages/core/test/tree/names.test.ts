import { ZoottError } from '@zoott/core';
import {
  DEFAULT_TASK_LIMITS,
  RESERVED_WORLD_NAMES,
  validateTaskInfo,
  validateTaskName,
  validateWorldName,
} from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';

/** Runs `fn`, expects a ZoottError with `code` and `field`, and a message matching `reason`. */
function rejects(fn: () => unknown, code: string, field: string, reason: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ZoottError);
  const err = caught as ZoottError;
  expect(err.code).toBe(code);
  expect(err.field).toBe(field);
  expect(err.message).toMatch(reason);
}

describe('validateTaskName', () => {
  it('accepts ordinary names', () => {
    for (const n of ['requestFile_alpha', 'a', 'x.y-z', 'Ünïcødé', '...', '.a', 'zookeeper']) {
      expect(validateTaskName(n)).toBe(n);
    }
    expect(validateTaskName('a'.repeat(DEFAULT_TASK_LIMITS.maxNameLength))).toHaveLength(200);
  });

  it.each([
    [42, /must be a string, got number/],
    [null, /must be a string, got null/],
    [['a'], /must be a string, got an array/],
    ['', /must not be empty/],
    ['x'.repeat(201), /at most 200 characters, got 201/],
    ['.', /must not be '\.' or '\.\.'/],
    ['..', /must not be '\.' or '\.\.'/],
    ['a b', /space/],
    ['a\tb', /whitespace/],
    ['a\u00a0b', /whitespace/],
    ['a/b', /must not contain '\/'/],
    ['a\\b', /must not contain '\\'/],
    ['a|b', /must not contain '\|'/],
    ['a\u0000b', /ZooKeeper rejects/],
    ['a\u0085b', /whitespace|ZooKeeper rejects/],
    ['a\u0090b', /ZooKeeper rejects/],
    ['smile\u{1F600}', /ZooKeeper rejects/],
    ['a\ue000', /ZooKeeper rejects/],
    ['a\ufff0', /ZooKeeper rejects/],
  ])('rejects %#: %j', (name, reason) => {
    rejects(() => validateTaskName(name), 'INVALID_TASK', 'name', reason);
  });

  it('names the field it was given and honours a custom length limit', () => {
    rejects(() => validateTaskName('a b', 'key[2]'), 'INVALID_TASK', 'key[2]', /key\[2\] "a b"/);
    rejects(
      () => validateTaskName('abcd', 'name', { maxNameLength: 3 }),
      'INVALID_TASK',
      'name',
      /at most 3/,
    );
  });
});

describe('validateWorldName', () => {
  it('accepts a plain world name', () => {
    expect(validateWorldName('myworld')).toBe('myworld');
  });
  it.each([
    ['', /must not be empty/],
    ['my world', /space/],
    ['a/b', /'\/'/],
    ['a|b', /'\|'/],
    ['..', /'\.'/],
    [7, /must be a string/],
  ])('rejects %j', (world, reason) => {
    rejects(() => validateWorldName(world), 'INVALID_CONFIG', 'world', reason);
  });
  it('rejects the names of zoott areas', () => {
    for (const w of RESERVED_WORLD_NAMES) {
      rejects(() => validateWorldName(w), 'INVALID_CONFIG', 'world', /reserved/);
    }
  });
});

describe('validateTaskInfo', () => {
  it('returns a normalised copy', () => {
    const input = { name: 'requestFile_a', type: 'request', data: { url: 'http://x', n: [1, 2] } };
    const info = validateTaskInfo(input);
    expect(info).toEqual(input);
    expect(info).not.toBe(input);
    expect(validateTaskInfo({ name: 'a', type: 't' })).toEqual({ name: 'a', type: 't' });
    expect('data' in validateTaskInfo({ name: 'a', type: 't', data: undefined })).toBe(false);
    expect(validateTaskInfo({ name: 'a', type: 't', data: null }).data).toBeNull();
  });

  it.each([
    [null, 'taskInfo', /must be an object, got null/],
    ['a', 'taskInfo', /must be an object, got string/],
    [[], 'taskInfo', /must be an object, got an array/],
    [{ type: 't' }, 'name', /must be a string, got undefined/],
    [{ name: 'a b', type: 't' }, 'name', /space/],
    [{ name: 'a' }, 'type', /must be a string, got undefined/],
    [{ name: 'a', type: 3 }, 'type', /must be a string, got number/],
    [{ name: 'a', type: '' }, 'type', /must not be empty/],
    [{ name: 'a', type: 't'.repeat(201) }, 'type', /at most 200/],
    [{ name: 'a', type: 'x\ny' }, 'type', /control characters/],
    [{ name: 'a', type: 't', nmae: 'x' }, 'nmae', /unknown task field/],
    [{ name: 'a', type: 't', data: () => 1 }, 'data', /function is not representable/],
    [{ name: 'a', type: 't', data: 10n }, 'data', /bigint is not representable/],
    [{ name: 'a', type: 't', data: Number.NaN }, 'data', /NaN is not representable/],
    [{ name: 'a', type: 't', data: { x: [1, Infinity] } }, 'data.x[1]', /Infinity/],
    [{ name: 'a', type: 't', data: [undefined] }, 'data[0]', /undefined is not representable/],
    [{ name: 'a', type: 't', data: { when: new Date(0) } }, 'data.when', /plain objects/],
    [{ name: 'a', type: 't', data: { s: Symbol('x') } }, 'data.s', /symbol/],
  ])('rejects %o (field %s)', (input, field, reason) => {
    rejects(() => validateTaskInfo(input), 'INVALID_TASK', field, reason);
  });

  it('rejects cyclic and too-deep data', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    rejects(
      () => validateTaskInfo({ name: 'a', type: 't', data: cyclic }),
      'INVALID_TASK',
      'data.self',
      /cycle/,
    );
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    expect(() => validateTaskInfo({ name: 'a', type: 't', data: deep })).toThrow(/nested deeper/);
  });

  it('accepts shared (non-cyclic) references and drops undefined properties like JSON', () => {
    const shared = { v: 1 };
    expect(() =>
      validateTaskInfo({ name: 'a', type: 't', data: { x: shared, y: shared, z: undefined } }),
    ).not.toThrow();
  });

  it('caps the JSON size of data in UTF-8 bytes', () => {
    const limit = DEFAULT_TASK_LIMITS.maxDataBytes;
    // JSON of a string is the string plus two quotes.
    expect(() =>
      validateTaskInfo({ name: 'a', type: 't', data: 'x'.repeat(limit - 2) }),
    ).not.toThrow();
    rejects(
      () => validateTaskInfo({ name: 'a', type: 't', data: 'x'.repeat(limit - 1) }),
      'INVALID_TASK',
      'data',
      new RegExp(`${limit + 1} bytes, more than the limit of ${limit}`),
    );
    // é is two bytes in UTF-8.
    rejects(
      () => validateTaskInfo({ name: 'a', type: 't', data: 'é'.repeat(5) }, { maxDataBytes: 11 }),
      'INVALID_TASK',
      'data',
      /12 bytes/,
    );
  });
});
