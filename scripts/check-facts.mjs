#!/usr/bin/env node
// Facts that live in one module each, checked over the shipped source (the files
// check-sizes.mjs measures): a finding is a line that states such a fact somewhere else.
//
// - layout: the ZooKeeper node layout (the `/zoott_` prefix, the area letters, how an area's,
//   a bucket's or an entry's path is made, how an entry name is taken apart) is known to
//   packages/core/src/tree/areas.ts (the names, stored on ZooKeeper) and
//   packages/core/src/engine/layout.ts (the paths) alone. Everyone else asks them.
//
// - exit codes: the exit codes of zoott's programs are rows of one table,
//   packages/jobs/src/exit-codes.ts. A number handed to `process.exit` or set as
//   `process.exitCode`, or an `EXIT_*` constant, anywhere else is a code defined beside it.
//
// - zk-wire: the ZooKeeper protocol's numbers the adapter uses (op codes, error codes, xids,
//   event types, connection states) are one table, packages/zk-adapter/src/zk-wire/protocol.ts.
//   Elsewhere in the adapter, a negative number other than -1 (the "none" of indexOf), or a
//   named integer constant that is no size, count or time, restates one.
//
// Only code counts: comments and docs may show paths. `node scripts/check-facts.mjs [--json]`
// exits 1 on a finding.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, sourceFiles } from './check-sizes.mjs';

const ts = createRequire(import.meta.url)('typescript');

/** The layout's own modules. */
export const LAYOUT_MODULES = [
  'packages/core/src/tree/areas.ts',
  'packages/core/src/engine/layout.ts',
];

/** Calls that take an area: given a string literal, the caller wrote an area's letter. */
const AREA_TAKERS = /\b(?:bucketPath|recordPath|areaRoot|areaParent)\(\s*['"`]/;
/** The entry-name codec: core's engine writes and reads entry names; no other package does. */
const ENTRY_CODEC = /\b(?:parseEntryName|entryPrefix)\(/;

/**
 * Whether a literal builds a zoott path: it holds `/zoott_`, or is the bare `zoott_` prefix.
 * A path shown with a placeholder (`/zoott_<world>`, `/zoott_q/<world>` in a help text)
 * documents the layout and builds nothing.
 */
function builtPath(value) {
  if (value === 'zoott_') return true;
  for (const match of value.matchAll(/\/zoott_[^\s'"`),;]*/g))
    if (!match[0].includes('<')) return true;
  return false;
}

/** Tokens after which a `/` divides; after any other it starts a regular expression. */
const ENDS_OPERAND = new Set([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.CloseParenToken,
  ts.SyntaxKind.CloseBracketToken,
  ts.SyntaxKind.NumericLiteral,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.ThisKeyword,
  ts.SyntaxKind.PlusPlusToken,
  ts.SyntaxKind.MinusMinusToken,
]);

const TRIVIA = new Set([
  ts.SyntaxKind.WhitespaceTrivia,
  ts.SyntaxKind.NewLineTrivia,
  ts.SyntaxKind.SingleLineCommentTrivia,
  ts.SyntaxKind.MultiLineCommentTrivia,
  ts.SyntaxKind.ShebangTrivia,
]);

/** The tokens of `text`, trivia included, with templates and regular expressions told apart. */
function tokens(text) {
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    false,
    ts.LanguageVariant.Standard,
    text,
  );
  const out = [];
  let braces = 0;
  let previous = ts.SyntaxKind.Unknown;
  const templateDepths = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.OpenBraceToken) braces++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (templateDepths.length > 0 && templateDepths.at(-1) === braces) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === ts.SyntaxKind.TemplateTail) templateDepths.pop();
      } else braces--;
    } else if (
      (kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) &&
      !ENDS_OPERAND.has(previous)
    )
      kind = scanner.reScanSlashToken();
    if (kind === ts.SyntaxKind.TemplateHead) templateDepths.push(braces);
    out.push({
      kind,
      start: scanner.getTokenPos(),
      text: scanner.getTokenText(),
      value: scanner.getTokenValue(),
    });
    if (!TRIVIA.has(kind)) previous = kind;
  }
  return out;
}

const LITERAL = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
]);

/** Each string or template piece of `text`, with its line (1-based). */
function literals(text) {
  const lineOf = (pos) => text.slice(0, pos).split('\n').length;
  return tokens(text)
    .filter((token) => LITERAL.has(token.kind))
    .map((token) => ({ line: lineOf(token.start), text: token.value }));
}

/** Code lines of `text` (comments and the text of literals blanked), for the call patterns. */
function codeLines(text) {
  const out = text.split('\n').map(() => '');
  let line = 0;
  for (const token of tokens(text)) {
    const comment =
      token.kind === ts.SyntaxKind.SingleLineCommentTrivia ||
      token.kind === ts.SyntaxKind.MultiLineCommentTrivia;
    const parts = token.text.split('\n');
    // A literal's text is data, not code (a child's script, say): only its quote is kept.
    const literal = LITERAL.has(token.kind);
    parts.forEach((part, index) => {
      if (!comment) out[line + index] += literal ? (index === 0 ? part.slice(0, 1) : '') : part;
    });
    line += parts.length - 1;
  }
  return out;
}

/** Findings of the layout rule in one file's text. */
export function layoutFindings(file, text) {
  if (LAYOUT_MODULES.includes(file)) return [];
  const findings = [];
  for (const { line, text: value } of literals(text))
    if (builtPath(value))
      findings.push({
        rule: 'layout',
        file,
        line,
        what: `a zoott path written by hand: '${value}'`,
      });
  const inCore = file.startsWith('packages/core/src/');
  codeLines(text).forEach((code, index) => {
    if (AREA_TAKERS.test(code))
      findings.push({
        rule: 'layout',
        file,
        line: index + 1,
        what: `an area's letter: ${code.trim()}`,
      });
    if (!inCore && ENTRY_CODEC.test(code))
      findings.push({
        rule: 'layout',
        file,
        line: index + 1,
        what: `entry names taken apart or made outside core: ${code.trim()}`,
      });
  });
  return findings;
}

/** The one table of exit codes. */
export const EXIT_CODE_MODULE = 'packages/jobs/src/exit-codes.ts';

const EXIT_CODE_DEFINED = [
  /\bprocess\.exit\(\s*[-+(]*\s*\d/,
  /\bexitCode\s*=\s*[-+(]*\s*\d/,
  /\bEXIT_[A-Z0-9_]+\s*=\s*\d/,
];

/** Findings of the exit-code rule in one file's text. */
export function exitCodeFindings(file, text) {
  if (file === EXIT_CODE_MODULE) return [];
  const findings = [];
  codeLines(text).forEach((code, index) => {
    if (EXIT_CODE_DEFINED.some((pattern) => pattern.test(code)))
      findings.push({
        rule: 'exit-codes',
        file,
        line: index + 1,
        what: `an exit code outside ${EXIT_CODE_MODULE}: ${code.trim()}`,
      });
  });
  return findings;
}

/** The one table of the ZooKeeper protocol's numbers. */
export const PROTOCOL_MODULE = 'packages/zk-adapter/src/zk-wire/protocol.ts';

/** Named integers that are sizes, counts or times, not protocol numbers. */
const NOT_PROTOCOL = /(_MS|_BYTES|_LENGTH|_HEADER|_MARKERS|_READS|_PER_SESSION)$/;
/**
 * The jute codec's own kinds of record fields (jute-speed.ts): how it walks a record's spec,
 * never sent.
 */
const CODEC_KINDS = new Set(['INT', 'LONG', 'BUFFER', 'USTRING', 'BOOLEAN', 'VECTOR', 'DATA']);

/** Findings of the zk-wire rule in one file's text. */
export function protocolFindings(file, text) {
  if (!file.startsWith('packages/zk-adapter/src/') || file === PROTOCOL_MODULE) return [];
  const findings = [];
  codeLines(text).forEach((code, index) => {
    const named = /\bconst ([A-Z][A-Z0-9_]*) = (-?\d+);/.exec(code);
    const restated =
      (named && !NOT_PROTOCOL.test(named[1]) && !CODEC_KINDS.has(named[1])) ||
      /(^|[^\w)\].\s]\s*|[=(,:[!<>?]\s*)-(?!1\b)\d+\b/.test(code);
    if (restated)
      findings.push({
        rule: 'zk-wire',
        file,
        line: index + 1,
        what: `a protocol number outside ${PROTOCOL_MODULE}: ${code.trim()}`,
      });
  });
  return findings;
}

/** Every finding over the shipped source below `root`. */
export function checkFacts(root = ROOT) {
  const findings = [];
  for (const file of sourceFiles(root)) {
    if (!/\.[cm]?tsx?$/.test(file) || file.endsWith('.d.ts')) continue;
    const text = readFileSync(path.join(root, file), 'utf8');
    findings.push(
      ...layoutFindings(file, text),
      ...exitCodeFindings(file, text),
      ...protocolFindings(file, text),
    );
  }
  return findings;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rootArg = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
  const findings = checkFacts(rootArg ? path.resolve(rootArg) : ROOT);
  if (process.argv.includes('--json')) console.log(JSON.stringify({ findings }, null, 2));
  else {
    for (const f of findings) console.log(`${f.file}:${f.line}: ${f.rule}: ${f.what}`);
    console.log(
      findings.length === 0
        ? 'check-facts: each fact lives in its one module'
        : `check-facts: ${findings.length} finding(s)`,
    );
  }
  process.exitCode = findings.length === 0 ? 0 : 1;
}
