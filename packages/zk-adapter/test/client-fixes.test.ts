import { afterAll, describe, expect, it } from 'vitest';
import { assertClientFixes, missingClientFixes } from '../src/zk-wire/client-fixes.js';
import { lib } from '../src/zk-wire/client-lib.js';
import { PATCHED_FILES, patchedLibrary, removeCopies, unpatchedLibrary } from './library-copies.js';

afterAll(removeCopies);

/**
 * The self-check the adapter runs before its first connection: it must pass on the patched
 * library and refuse any copy missing a fix, naming what is missing.
 */
describe('client library self-check', () => {
  it('passes on the patched library the adapter uses, and on a fresh copy of it', () => {
    expect(missingClientFixes(lib)).toEqual([]);
    expect(() => assertClientFixes()).not.toThrow();
    expect(missingClientFixes(patchedLibrary())).toEqual([]);
  });

  it('refuses the pristine 1.1.3 with INVALID_CONFIG, naming every missing fix', () => {
    const pristine = unpatchedLibrary();
    expect(missingClientFixes(pristine)).toEqual([
      'multi version 0 (Transaction.js)',
      'unknown error codes (Exception.js)',
      'setData(null) (index.js)',
      'read timeout (ConnectionManager.js)',
      'auth and watches first on reconnect (ConnectionManager.js)',
      'replies to new operations (ConnectionManager.js)',
    ]);
    expect(() => assertClientFixes(pristine)).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        op: 'connect',
        message: expect.stringMatching(/lacks zoott's fixes \(multi version 0 .*refusing/),
      }),
    );
  });

  it.each(PATCHED_FILES)('refuses a copy missing only the fixes to %s', (file) => {
    const missing = missingClientFixes(unpatchedLibrary(file));
    expect(missing.length).toBeGreaterThan(0);
    for (const m of missing) expect(m).toContain(`(${path(file)})`);
  });
});

const path = (file: string) => file.replace(/^lib\//, '');
