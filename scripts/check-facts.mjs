#!/usr/bin/env node
// Facts that live in one module each, checked over the shipped source (the files
// check-sizes.mjs measures): a finding is a line that states such a fact somewhere else.
//
// - layout: the ZooKeeper node layout (the `/zoott_` prefix, the area letters, how an area's,
//   a bucket's or an entry's path is made, how an entry name is taken apart) is known to
//   packages/core/src/tree/areas.ts (the names, stored on ZooKeeper) and
//   packages/core/src/engine/layout.ts (the paths) alone. Everyone else asks them.
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

/** Each string or template piece of `text`, with its line (1-based). */
function literals(text) {
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    false,
    ts.LanguageVariant.Standard,
    text,
  );
  const found = [];
  const lineOf = (pos) => text.slice(0, pos).split('\n').length;
  let braces = 0;
  const templateDepths = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.OpenBraceToken) braces++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (templateDepths.length > 0 && templateDepths.at(-1) === braces) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === ts.SyntaxKind.TemplateTail) templateDepths.pop();
      } else braces--;
    } else if (kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) {
      kind = scanner.reScanSlashToken();
    }
    if (kind === ts.SyntaxKind.TemplateHead) templateDepths.push(braces);
    if (
      kind === ts.SyntaxKind.StringLiteral ||
      kind === ts.SyntaxKind.NoSubstitutionTemplateLiteral ||
      kind === ts.SyntaxKind.TemplateHead ||
      kind === ts.SyntaxKind.TemplateMiddle ||
      kind === ts.SyntaxKind.TemplateTail
    )
      found.push({ line: lineOf(scanner.getTokenPos()), text: scanner.getTokenValue() });
  }
  return found;
}

/** Code lines of `text` (comments blanked), for the call patterns. */
function codeLines(text) {
  const out = text.split('\n').map(() => '');
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    false,
    ts.LanguageVariant.Standard,
    text,
  );
  let line = 0;
  let at = 0;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    const start = scanner.getTokenPos();
    const token = scanner.getTokenText();
    line += (text.slice(at, start).match(/\n/g) ?? []).length;
    at = start;
    if (
      kind === ts.SyntaxKind.SingleLineCommentTrivia ||
      kind === ts.SyntaxKind.MultiLineCommentTrivia
    )
      continue;
    const parts = token.split('\n');
    out[line] += parts[0];
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

/** Every finding over the shipped source below `root`. */
export function checkFacts(root = ROOT) {
  const findings = [];
  for (const file of sourceFiles(root)) {
    if (!/\.[cm]?tsx?$/.test(file) || file.endsWith('.d.ts')) continue;
    const text = readFileSync(path.join(root, file), 'utf8');
    findings.push(...layoutFindings(file, text));
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
