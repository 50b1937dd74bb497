import { ZoottError } from '../contract/errors.js';
import { DEFAULT_TASK_LIMITS } from './limits.js';
import { regexHazard } from './regex-safety.js';

/**
 * Which parents a child is queued under. `name` and `type` are regular expressions (no
 * flags) matched against the WHOLE name or type: `alpha` matches only `alpha`, not
 * `requestFile_alpha`; write `.*_alpha` for that. An omitted `type` matches every type.
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

/** Bounds on parent patterns, so matching every tree node stays cheap. */
export interface PatternLimits {
  /** Longest pattern source, in characters. */
  maxPatternLength: number;
  /** Longest name or type a matcher will test; longer input never matches. */
  maxInputLength: number;
  /** Budget for the estimated backtracking of a pattern (see regex-safety). */
  maxBacktrackEstimate: number;
}

export const DEFAULT_PATTERN_LIMITS: Readonly<PatternLimits> = Object.freeze({
  maxPatternLength: 256,
  maxInputLength: Math.max(DEFAULT_TASK_LIMITS.maxNameLength, DEFAULT_TASK_LIMITS.maxTypeLength),
  maxBacktrackEstimate: 2e7,
});

/**
 * Compiles a parent pattern into a matcher. Throws `INVALID_PATTERN` (field `parent.name`
 * or `parent.type`) when a pattern is not a string, is too long, does not compile, or could
 * backtrack catastrophically (nested quantifiers such as `(a+)+`, backreferences, ...).
 */
export function compileParentPattern(
  p: ParentPattern,
  limits?: Partial<PatternLimits>,
): ParentMatcher {
  const lim = { ...DEFAULT_PATTERN_LIMITS, ...stripUndefined(limits) };
  if (typeof p !== 'object' || p === null)
    throw new ZoottError('INVALID_PATTERN', 'parent must be an object {name, type?}', {
      field: 'parent',
    });
  const nameRe = compileOne(p.name, 'parent.name', lim);
  const typeRe = p.type === undefined ? null : compileOne(p.type, 'parent.type', lim);
  const source: ParentPattern =
    p.type === undefined ? { name: p.name } : { name: p.name, type: p.type };
  Object.freeze(source);
  return {
    source,
    matches(node) {
      if (node.name.length > lim.maxInputLength || node.type.length > lim.maxInputLength)
        return false;
      return nameRe.test(node.name) && (typeRe === null || typeRe.test(node.type));
    },
  };
}

function compileOne(pattern: unknown, field: string, lim: PatternLimits): RegExp {
  const bad = (why: string, cause?: unknown) =>
    new ZoottError('INVALID_PATTERN', `${field} ${JSON.stringify(pattern)}: ${why}`, {
      field,
      cause,
    });
  if (typeof pattern !== 'string') throw bad(`must be a string, got ${typeof pattern}`);
  if (pattern.length === 0) throw bad('must not be empty');
  if (pattern.length > lim.maxPatternLength)
    throw bad(`must be at most ${lim.maxPatternLength} characters, got ${pattern.length}`);
  let re: RegExp;
  try {
    // Anchored: the pattern must match the whole name. The group keeps `a|b` from
    // turning into `^a` or `b$`.
    re = new RegExp(`^(?:${pattern})$`);
  } catch (err) {
    throw bad(`is not a valid regular expression: ${(err as Error).message}`, err);
  }
  // Compiling the group also catches a stray ')' that would close it early, e.g. `a)|(b`.
  if (!balanced(pattern)) throw bad('is not a valid regular expression: unbalanced parentheses');
  const hazard = regexHazard(pattern, lim.maxInputLength, lim.maxBacktrackEstimate);
  if (hazard) throw bad(hazard);
  return re;
}

/** Whether `(` and `)` outside classes and escapes pair up (a wrapped `a)|(b` compiles!). */
function balanced(src: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') {
      inClass = true;
      if (src[i + 1] === '^') i++;
      if (src[i + 1] === ']') {
        i++;
        inClass = false; // `[]` / `[^]`: an empty class in JavaScript
      }
    } else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

function stripUndefined<T extends object>(o: Partial<T> | undefined): Partial<T> {
  if (!o) return {};
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
