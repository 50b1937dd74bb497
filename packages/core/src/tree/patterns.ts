import { RE2JS } from 're2js';
import { ZoottError } from '../contract/errors.js';
import { DEFAULT_TASK_LIMITS } from './limits.js';

/**
 * Which parents a child is queued under. `name` and `type` are regular expressions in RE2
 * syntax (no flags) matched against the WHOLE name or type: `alpha` matches only `alpha`,
 * not `requestFile_alpha`; write `.*_alpha` for that. An omitted `type` matches every type.
 */
export interface ParentPattern {
  name: string;
  type?: string;
}

export interface ParentMatcher {
  /** Whether a tree node is one of the parents the pattern asks for. */
  matches(node: { name: string; type: string }): boolean;
  readonly source: ParentPattern;
}

/**
 * Bounds on parent patterns. Matching is linear in the input (RE2 never backtracks), so
 * these bound the constant: a match costs about `input length × program size`.
 */
export interface PatternLimits {
  /** Longest pattern source, in characters. */
  maxPatternLength: number;
  /** Longest name or type a matcher will test; longer input never matches. */
  maxInputLength: number;
  /** Largest compiled program (RE2 instructions); `{n,m}` repetitions multiply it. */
  maxProgramSize: number;
}

export const DEFAULT_PATTERN_LIMITS: Readonly<PatternLimits> = Object.freeze({
  maxPatternLength: 256,
  maxInputLength: Math.max(DEFAULT_TASK_LIMITS.maxNameLength, DEFAULT_TASK_LIMITS.maxTypeLength),
  maxProgramSize: 2000,
});

/**
 * Compiles a parent pattern into a matcher. Patterns are matched by RE2 (the `re2js` port),
 * whose time is linear in the input whatever the pattern, so no pattern can stall the
 * process that matches it. Throws `INVALID_PATTERN` (field `parent.name` or `parent.type`)
 * when a pattern is not a string, is too long, or is not valid RE2 syntax (backreferences and
 * lookaround are not: they are what makes backtracking engines exponential).
 */
export function compileParentPattern(
  pattern: ParentPattern,
  limits?: Partial<PatternLimits>,
): ParentMatcher {
  const lim = { ...DEFAULT_PATTERN_LIMITS, ...stripUndefined(limits) };
  if (typeof pattern !== 'object' || pattern === null)
    throw new ZoottError('INVALID_PATTERN', 'parent must be an object {name, type?}', {
      field: 'parent',
    });
  const nameRe = compilePattern(pattern.name, 'parent.name', lim);
  const typeRe =
    pattern.type === undefined ? null : compilePattern(pattern.type, 'parent.type', lim);
  const source: ParentPattern =
    pattern.type === undefined
      ? { name: pattern.name }
      : { name: pattern.name, type: pattern.type };
  Object.freeze(source);
  return {
    source,
    matches(node) {
      if (node.name.length > lim.maxInputLength || node.type.length > lim.maxInputLength)
        return false;
      return nameRe.testExact(node.name) && (typeRe === null || typeRe.testExact(node.type));
    },
  };
}

/**
 * Compiles one user pattern with the checks of {@link compileParentPattern}; `field` names
 * it in errors. Exported for callers that need capture groups (`matcher(s).group(n)`), so
 * that they match with the same linear-time engine.
 */
export function compilePattern(
  pattern: unknown,
  field: string,
  limits?: Partial<PatternLimits>,
): RE2JS {
  const lim = { ...DEFAULT_PATTERN_LIMITS, ...stripUndefined(limits) };
  const bad = (why: string, cause?: unknown) =>
    new ZoottError('INVALID_PATTERN', `${field} ${JSON.stringify(pattern)}: ${why}`, {
      field,
      cause,
    });
  if (typeof pattern !== 'string') throw bad(`must be a string, got ${typeof pattern}`);
  if (pattern.length === 0) throw bad('must not be empty');
  if (pattern.length > lim.maxPatternLength)
    throw bad(`must be at most ${lim.maxPatternLength} characters, got ${pattern.length}`);
  let re: RE2JS;
  try {
    // Not wrapped in `^(?:...)$`: testExact and Matcher.matches anchor at both ends, and a
    // stray `)` (`a)|(b`) stays the syntax error it is instead of closing a wrapper group.
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw bad(
      `is not a valid regular expression in RE2 syntax (${(err as Error).message}); ` +
        'backreferences (\\1) and lookaround ((?=...), (?!...)) are not supported',
      err,
    );
  }
  const size = re.programSize();
  if (size > lim.maxProgramSize)
    throw bad(
      `compiles to ${size} instructions, more than the limit of ${lim.maxProgramSize}; ` +
        'use smaller or fewer {n,m} repetitions',
    );
  return re;
}

function stripUndefined<T extends object>(partial: Partial<T> | undefined): Partial<T> {
  if (!partial) return {};
  return Object.fromEntries(
    Object.entries(partial).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}
