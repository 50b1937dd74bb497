import { ZoottError } from '@zoott/core';
import { compileParentPattern, DEFAULT_PATTERN_LIMITS } from '@zoott/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const node = (name: string, type = 't') => ({ name, type });

function patternError(p: { name: unknown; type?: unknown }): ZoottError {
  try {
    compileParentPattern(p as { name: string; type?: string });
  } catch (err) {
    if (err instanceof ZoottError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(p)} to be rejected`);
}

describe('compileParentPattern', () => {
  it('matches the whole name (anchored)', () => {
    const m = compileParentPattern({ name: 'alpha' });
    expect(m.matches(node('alpha'))).toBe(true);
    expect(m.matches(node('requestFile_alpha'))).toBe(false);
    expect(m.matches(node('alphabet'))).toBe(false);
    expect(compileParentPattern({ name: '.*_alpha' }).matches(node('requestFile_alpha'))).toBe(
      true,
    );
  });

  it('keeps alternation inside the anchors', () => {
    const m = compileParentPattern({ name: 'a|b' });
    expect(m.matches(node('a'))).toBe(true);
    expect(m.matches(node('b'))).toBe(true);
    expect(m.matches(node('ab'))).toBe(false);
    expect(m.matches(node('xb'))).toBe(false);
  });

  it('matches the type too when given, any type otherwise', () => {
    const m = compileParentPattern({ name: 'request.*', type: 'fetch|get' });
    expect(m.matches(node('requestA', 'fetch'))).toBe(true);
    expect(m.matches(node('requestA', 'fetcher'))).toBe(false);
    expect(compileParentPattern({ name: 'x' }).matches(node('x', 'anything'))).toBe(true);
    expect(m.source).toEqual({ name: 'request.*', type: 'fetch|get' });
  });

  it('never matches input longer than the bound', () => {
    const m = compileParentPattern({ name: 'a*' });
    expect(m.matches(node('a'.repeat(DEFAULT_PATTERN_LIMITS.maxInputLength)))).toBe(true);
    expect(m.matches(node('a'.repeat(DEFAULT_PATTERN_LIMITS.maxInputLength + 1)))).toBe(false);
  });

  it('accepts common shapes, including ones a backtracking engine would stall on', () => {
    for (const name of [
      'requestFile_(alpha|beta)',
      '(ab|cd)+',
      '[a-z_]+',
      '\\w+_\\d{1,3}',
      '(?:x-)?file_.*',
      '.*_.*_.*_.*',
      '(a+)+',
      '(a|ab)*c',
      '(?P<id>\\d+)',
      '[]]', // RE2: a class holding ']'
      'a{',
    ]) {
      expect(() => compileParentPattern({ name })).not.toThrow();
    }
    expect(compileParentPattern({ name: '[]]' }).matches(node(']'))).toBe(true);
    expect(compileParentPattern({ name: 'a{' }).matches(node('a{'))).toBe(true);
  });

  it('matches adversarial patterns against long hostile names in linear time', () => {
    // Each of these takes a backtracking engine (JavaScript's RegExp) minutes or longer on
    // these names; the first one passed the old heuristic guard. RE2 visits each input
    // character once per program instruction, so the whole set takes milliseconds.
    const adversarial = [
      '(?:a|a)'.repeat(36),
      '(a+)+$',
      '(a*)*b',
      '(a|aa)*c',
      '(\\w+\\s?)*$',
      '^(a|a?)+$',
      '(.*a){12}',
      '((a+)+)+b',
      '(x+x+)+y',
      '.*_.*_.*_.*_.*_.*_.*#',
    ];
    // Every name ends in '!', which no pattern accepts: a backtracking engine tries every
    // way to split the rest before it gives up.
    const names = [
      `${'a'.repeat(36)}!`,
      `${'a'.repeat(199)}!`,
      `${'x'.repeat(199)}!`,
      `${'a_'.repeat(99)}a!`,
    ];
    const started = performance.now();
    for (const name of adversarial) {
      const m = compileParentPattern({ name, type: name });
      for (const n of names) expect(m.matches(node(n, n)), `${name} on ${n}`).toBe(false);
    }
    expect(compileParentPattern({ name: '(a+)+' }).matches(node('a'.repeat(200)))).toBe(true);
    // A bound against exponential blow-up (minutes), not a benchmark: generous on a busy machine.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it.each([
    [{ name: 3 }, 'parent.name', /must be a string/],
    [{ name: '' }, 'parent.name', /must not be empty/],
    [{ name: 'x'.repeat(257) }, 'parent.name', /at most 256 characters/],
    [{ name: '(a' }, 'parent.name', /not a valid regular expression/],
    [{ name: '[a-' }, 'parent.name', /not a valid regular expression/],
    [{ name: '*a' }, 'parent.name', /not a valid regular expression/],
    [{ name: 'a)|(b' }, 'parent.name', /not a valid regular expression/],
    [{ name: 'ok', type: '(' }, 'parent.type', /not a valid regular expression/],
    [{ name: 'ok', type: 5 }, 'parent.type', /must be a string/],
    [{ name: '(a)\\1' }, 'parent.name', /RE2 syntax.*backreferences/],
    [{ name: '(?<x>a)\\k<x>' }, 'parent.name', /RE2 syntax/],
    [{ name: 'a(?=b)' }, 'parent.name', /RE2 syntax.*lookaround/],
    [{ name: '(?!x).*' }, 'parent.name', /RE2 syntax/],
    [{ name: 'a{1001}' }, 'parent.name', /RE2 syntax/],
    [{ name: '(.{0,999})(.{0,999})' }, 'parent.name', /instructions, more than the limit of 2000/],
  ])('rejects %o (%s)', (p, field, reason) => {
    const err = patternError(p);
    expect(err.code).toBe('INVALID_PATTERN');
    expect(err.field).toBe(field);
    expect(err.message).toMatch(reason);
  });

  it('honours custom pattern limits', () => {
    expect(compileParentPattern({ name: 'abcd' }).matches(node('abcd'))).toBe(true);
    expect(() => compileParentPattern({ name: 'abcd' }, { maxPatternLength: 3 })).toThrow(
      /at most 3/,
    );
  });

  it('every accepted pattern finishes on hostile names of the maximum length', () => {
    // Random patterns assembled from quantifier-heavy pieces: every one compiles and runs
    // against adversarial input without hanging.
    const piece = fc.constantFrom(
      'a',
      'a*',
      'a+',
      'a?',
      '.*',
      '(a)',
      '(ab|ba)+',
      '\\w+',
      '_',
      '[ab]+',
    );
    const hostile = ['a'.repeat(199) + '!', 'ab'.repeat(100), '_'.repeat(200), 'a_'.repeat(100)];
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), (pieces) => {
        const matcher = compileParentPattern({ name: pieces.join('') });
        for (const name of hostile) expect(typeof matcher.matches(node(name))).toBe('boolean');
      }),
      { numRuns: 200 },
    );
  });

  it('never throws anything but ZoottError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.option(fc.string({ maxLength: 20 })), (n, t) => {
        try {
          compileParentPattern(t === null ? { name: n } : { name: n, type: t });
        } catch (err) {
          expect(err).toBeInstanceOf(ZoottError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
