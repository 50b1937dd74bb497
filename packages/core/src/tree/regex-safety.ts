/**
 * A conservative check that a user regular expression cannot backtrack catastrophically
 * on a bounded-length name. It is a heuristic over JavaScript (non-unicode) syntax, not a
 * proof: it rejects patterns that *could* be slow, and accepts the common, simple ones.
 *
 * Rules (the pattern has already compiled, so its syntax is valid):
 * 1. No backreferences (`\1`, `\k<name>`): they defeat every bound below.
 * 2. No nested quantifiers: a group repeated by `*`, `+`, `{n,}` or `{n,m}` (m > 1) must
 *    not contain a quantifier itself (`(a+)+`, `(a?){9}`, `(\w+_)*`).
 * 3. An alternation inside a repeated group must list plain literal strings of which none
 *    is a prefix of another (`(ab|cd)+` is fine, `(a|ab)+` and `([a-z]|_)+` are not; use a
 *    character class `[a-z_]+`). Such a body parses a name one way only.
 * 4. Choice points multiply: each `?` counts 2, each `{n,m}` counts m-n+1, each `*`, `+`
 *    or `{n,}` counts the longest input. The product is a rough bound on the number of
 *    ways a match can be attempted and must stay under a budget.
 */

interface Quant {
  min: number;
  max: number; // Infinity when unbounded
}

type Atom =
  | { kind: 'char'; literal: string | null } // literal === null: a class, `.` or `\d`-like escape
  | { kind: 'assert' }
  | { kind: 'group'; body: Alt };

interface Item {
  atom: Atom;
  quant: Quant | null;
}
type Seq = Item[];
type Alt = Seq[];

/** Why a pattern is refused, or `null` when it is accepted. */
export function regexHazard(source: string, maxInput: number, budget: number): string | null {
  let ast: Alt;
  try {
    ast = new Parser(source).parse();
  } catch (err) {
    return (err as Error).message;
  }
  const nested = checkRepeatedGroups(ast);
  if (nested) return nested;
  const cost = choiceCost(ast, maxInput);
  if (cost > budget)
    return `too many repetitions that can backtrack against each other (estimated ${cost.toExponential(1)} attempts, budget ${budget.toExponential(1)}); use fewer '*', '+' or '?'`;
  return null;
}

const isRepeating = (q: Quant | null): boolean => q !== null && q.max > 1;

function checkRepeatedGroups(alt: Alt): string | null {
  for (const seq of alt) {
    for (const item of seq) {
      if (item.atom.kind !== 'group') continue;
      if (isRepeating(item.quant)) {
        if (containsQuantifier(item.atom.body))
          return 'nested quantifiers (a repeated group that contains a quantifier, like (a+)+) can backtrack catastrophically';
        if (!prefixFree(item.atom.body))
          return 'a repeated group with alternatives must list plain strings of which none is a prefix of another (like (ab|cd)+); use a character class for single characters';
      }
      const inner = checkRepeatedGroups(item.atom.body);
      if (inner) return inner;
    }
  }
  return null;
}

function containsQuantifier(alt: Alt): boolean {
  return alt.some((seq) =>
    seq.some(
      (item) =>
        item.quant !== null || (item.atom.kind === 'group' && containsQuantifier(item.atom.body)),
    ),
  );
}

/** The single literal string a quantifier-free sequence matches, or `null` if it has choices. */
function literalOf(seq: Seq): string | null {
  let out = '';
  for (const item of seq) {
    const a = item.atom;
    if (a.kind === 'char' && a.literal !== null) out += a.literal;
    else if (a.kind === 'group' && a.body.length === 1) {
      const inner = literalOf(a.body[0]!);
      if (inner === null) return null;
      out += inner;
    } else if (a.kind !== 'assert') return null;
  }
  return out;
}

/**
 * Whether the (quantifier-free) language of `alt` is prefix-free, checked structurally:
 * a single-character atom is; a concatenation of prefix-free parts is; an alternation is
 * when its branches are literal strings none of which prefixes another.
 */
function prefixFree(alt: Alt): boolean {
  if (alt.length === 1)
    return alt[0]!.every((item) => item.atom.kind !== 'group' || prefixFree(item.atom.body));
  const literals = alt.map(literalOf);
  if (literals.some((l) => l === null)) return false;
  const strs = literals as string[];
  return strs.every((a, i) => strs.every((b, j) => i === j || !b.startsWith(a)));
}

function choiceCost(alt: Alt, maxInput: number): number {
  let cost = 1;
  const visit = (a: Alt): void => {
    for (const seq of a)
      for (const item of seq) {
        if (item.quant && item.quant.max > item.quant.min) {
          const width =
            item.quant.max === Number.POSITIVE_INFINITY
              ? maxInput
              : Math.min(item.quant.max - item.quant.min + 1, maxInput);
          cost *= Math.max(width, 2);
        }
        if (item.atom.kind === 'group') visit(item.atom.body);
      }
  };
  visit(alt);
  return cost;
}

const SIMPLE_CLASS_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S']);
const CONTROL_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', v: '\v', f: '\f' };

/** A recursive-descent reader of the regular-expression grammar, enough for the rules above. */
class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): Alt {
    const alt = this.alternation();
    if (this.i < this.src.length) throw new Error(`unexpected ')' at ${this.i}`);
    return alt;
  }

  private alternation(): Alt {
    const alt: Alt = [this.sequence()];
    while (this.src[this.i] === '|') {
      this.i++;
      alt.push(this.sequence());
    }
    return alt;
  }

  private sequence(): Seq {
    const seq: Seq = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const atom = this.atom();
      seq.push({ atom, quant: this.quantifier() });
    }
    return seq;
  }

  private atom(): Atom {
    const c = this.src[this.i++]!;
    switch (c) {
      case '^':
      case '$':
        return { kind: 'assert' };
      case '.':
        return { kind: 'char', literal: null };
      case '[':
        this.skipClass();
        return { kind: 'char', literal: null };
      case '\\':
        return this.escape();
      case '(': {
        const lookaround = this.groupPrefix();
        const body = this.alternation();
        this.i++; // ')'
        // A lookaround consumes nothing; only its inner repetitions matter.
        return lookaround ? { kind: 'group', body: stripLiterals(body) } : { kind: 'group', body };
      }
      default:
        return { kind: 'char', literal: c };
    }
  }

  /** Consumes `?:`, `?=`, `?!`, `?<=`, `?<!` or `?<name>`; says whether it was a lookaround. */
  private groupPrefix(): boolean {
    if (this.src[this.i] !== '?') return false;
    const rest = this.src.slice(this.i);
    for (const p of ['?<=', '?<!', '?=', '?!']) {
      if (rest.startsWith(p)) {
        this.i += p.length;
        return true;
      }
    }
    if (rest.startsWith('?:')) this.i += 2;
    else if (rest.startsWith('?<')) this.i = this.src.indexOf('>', this.i) + 1;
    return false;
  }

  private escape(): Atom {
    const c = this.src[this.i++];
    if (c === undefined) throw new Error('pattern ends with a backslash');
    if (/[1-9]/.test(c)) throw new Error('backreferences (\\1 ...) are not allowed');
    if (c === 'k' && this.src[this.i] === '<')
      throw new Error('backreferences (\\k<name>) are not allowed');
    if (c === 'b' || c === 'B') return { kind: 'assert' };
    if (SIMPLE_CLASS_ESCAPES.has(c)) return { kind: 'char', literal: null };
    if (c in CONTROL_ESCAPES) return { kind: 'char', literal: CONTROL_ESCAPES[c]! };
    if (c === 'x' && /^[0-9a-fA-F]{2}/.test(this.src.slice(this.i))) {
      this.i += 2;
      return { kind: 'char', literal: null };
    }
    if (c === 'u' && /^[0-9a-fA-F]{4}/.test(this.src.slice(this.i))) {
      this.i += 4;
      return { kind: 'char', literal: null };
    }
    if (c === 'c' && /^[a-zA-Z]/.test(this.src.slice(this.i))) {
      this.i += 1;
      return { kind: 'char', literal: null };
    }
    if (c === '0') return { kind: 'char', literal: null };
    // Any other escaped character stands for itself (`\.`, `\|`, `\-`, ...).
    return { kind: 'char', literal: c };
  }

  /** Skips a character class; `]` right after `[` or `[^` closes it (empty class in JS). */
  private skipClass(): void {
    if (this.src[this.i] === '^') this.i++;
    while (this.i < this.src.length && this.src[this.i] !== ']') {
      if (this.src[this.i] === '\\') this.i++;
      this.i++;
    }
    this.i++; // ']'
  }

  private quantifier(): Quant | null {
    const c = this.src[this.i];
    let q: Quant | null = null;
    if (c === '*') q = { min: 0, max: Number.POSITIVE_INFINITY };
    else if (c === '+') q = { min: 1, max: Number.POSITIVE_INFINITY };
    else if (c === '?') q = { min: 0, max: 1 };
    if (q) this.i++;
    else if (c === '{') {
      // Outside unicode mode a '{' that does not start a valid bound is a literal.
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return null;
      this.i += m[0].length;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
      q = { min, max };
    }
    if (q && this.src[this.i] === '?') this.i++; // lazy
    return q;
  }
}

/** A lookaround body keeps its structure but none of its characters count as literals. */
function stripLiterals(alt: Alt): Alt {
  return alt.map((seq) =>
    seq.map((item) => ({
      quant: item.quant,
      atom:
        item.atom.kind === 'group'
          ? { kind: 'group', body: stripLiterals(item.atom.body) }
          : item.atom.kind === 'char'
            ? { kind: 'assert' }
            : item.atom,
    })),
  );
}
