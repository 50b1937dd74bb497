import { isZoottError } from '@zoott/core';
import { parseHierarchyText, ZkConf } from '@zoott/core/recipes';
import { expect, it } from 'vitest';

/** The error `fn` throws; fails the test when it throws nothing or no ZoottError. */
function thrown(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (isZoottError(err)) return err;
    throw err;
  }
  throw new Error('expected a ZoottError, nothing was thrown');
}

// An error about a bad part of a config quotes the part's own error without its code: the
// message starts with one code and names the wrong letter, once.
it('a bad permission letter in a config ACL is one INVALID_CONFIG, the reason quoted without its own code', () => {
  const err = thrown(() => new ZkConf({ acl: [['xp', '123', 'cdrwx']] }));
  expect(err.code).toBe('INVALID_CONFIG');
  expect(err.message).toMatch(/^INVALID_CONFIG: /);
  expect(err.message).not.toMatch(/INVALID_ACL_SPEC/);
  expect(err.message).toMatch(/permission "x"/);
});

it('a bad permission in a hierarchy __acl__ is one INVALID_CONFIG, the reason quoted without its own code', () => {
  const err = thrown(() => parseHierarchyText('{"a": {"__acl__": {"xp": "cdrwq"}}}', 'json'));
  expect(err.code).toBe('INVALID_CONFIG');
  expect(err.message).toMatch(/^INVALID_CONFIG: hierarchy .*__acl__\.xp: /);
  expect(err.message).not.toMatch(/INVALID_ACL_SPEC/);
});
