import fc from 'fast-check';
import { afterAll, beforeAll } from 'vitest';
import { useFastJute } from '../src/zk-wire/jute-speed.js';

/**
 * What the tests that hold the adapter's jute against the library's share: the switch to the
 * library's own functions, and the strings, paths and chroots they generate.
 */

/** Runs `fn` with the library's own jute functions, then switches the fast ones back on. */
export function original<T>(fn: () => T): T {
  useFastJute(false);
  try {
    return fn();
  } finally {
    useFastJute(true);
  }
}

/** The fast jute functions are on around every test of the calling file. */
export function fastJuteAround(): void {
  beforeAll(() => useFastJute(true));
  afterAll(() => useFastJute(true));
}

/** 'binary' includes lone surrogates, which both encoders must turn into the same bytes. */
export const text = fc.string({ unit: 'binary', maxLength: 24 });

/** Absolute paths of up to four names of `unit` characters. */
export const pathOf = (unit: 'grapheme' | 'grapheme-ascii') =>
  fc
    .array(fc.string({ unit, minLength: 1, maxLength: 8 }), { maxLength: 4 })
    .map((parts) => `/${parts.join('/')}`);

/** A chroot made of `path`s, or none. */
export const chrootOf = (path: fc.Arbitrary<string>) =>
  fc.option(
    path.filter((p) => p !== '/'),
    { nil: undefined },
  );
