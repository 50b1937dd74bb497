#!/usr/bin/env node
// Keeps every room small enough to read: fails (exit 1) when a shipped source file
// (packages/*/src, apps/*/src; tests excluded) is over MAX_FILE_LINES lines, or when the body
// of a function, method, accessor, constructor or arrow is over MAX_FUNCTION_LINES lines.
// The file limit is sized for one concept, not as a target: a file holds one concept (the
// claimer, the worker loop, the settle path) and is split where the concept splits. At a
// tight wall (it was 500) files were cut by line count, and a concept ended up spread over
// rooms named for the overflow; 700 leaves a whole concept room to grow while a file that
// reaches it still says "two concepts live here". The function cap stays tight: a body
// longer than a screenful is a sequence of phases that each deserve a name.
// Each violation names the file, the function and its length. Part of `pnpm test`;
// `pnpm check:sizes` runs it alone, `--json` prints the same findings as JSON.
//
// A file or function may stay bigger only when EXCEPTIONS below lists it with a reason, and
// that reason also stands, word for word, in the README of the package that holds it: the
// reader of the package learns why, not just the reader of this script. An exception whose
// reason the README lacks, or which excuses nothing any more, fails the check too, so the
// list cannot rot.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MAX_FILE_LINES = 700;
export const MAX_FUNCTION_LINES = 120;

const CONFORMANCE_GROUP =
  "A conformance group is one list of independent it() cases that share the group's context, so its length is the number of cases, not the depth of any logic.";

/**
 * Files or functions allowed over the limits. `file` is relative to the repository root;
 * `name` (as the findings print it, e.g. `Engine.start`) picks one function, and its absence
 * means the file's own length. `reason` must appear in the package's README.md.
 *
 * @type {Array<{ file: string, name?: string, reason: string }>}
 */
export const EXCEPTIONS = [
  { file: 'packages/conformance/src/groups/acl.ts', name: 'aclTests', reason: CONFORMANCE_GROUP },
  { file: 'packages/conformance/src/groups/crud.ts', name: 'crudTests', reason: CONFORMANCE_GROUP },
  {
    file: 'packages/conformance/src/groups/multi-limits.ts',
    name: 'multiLimitsTests',
    reason: CONFORMANCE_GROUP,
  },
  {
    file: 'packages/conformance/src/groups/multi.ts',
    name: 'multiTests',
    reason: CONFORMANCE_GROUP,
  },
  {
    file: 'packages/conformance/src/groups/session.ts',
    name: 'sessionTests',
    reason: CONFORMANCE_GROUP,
  },
  {
    file: 'packages/conformance/src/groups/versions.ts',
    name: 'versionsTests',
    reason: CONFORMANCE_GROUP,
  },
  {
    file: 'packages/conformance/src/groups/watches.ts',
    name: 'watchesTests',
    reason: CONFORMANCE_GROUP,
  },
];

const SOURCE = /\.(?:ts|tsx|mts|cts)$/;
const NOT_SHIPPED = /(?:\.d\.[mc]?ts|\.test\.[mc]?tsx?|\.spec\.[mc]?tsx?)$/;

/** Lines as `wc -l` counts them, plus a last line without its newline. */
function lineCount(text) {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** Shipped source files under `<root>/{packages,apps}/<name>/src`, relative to root. */
export function sourceFiles(root) {
  const found = [];
  for (const area of ['packages', 'apps']) {
    const areaDir = path.join(root, area);
    if (!existsSync(areaDir)) continue;
    for (const pkg of readdirSync(areaDir, { withFileTypes: true })) {
      if (!pkg.isDirectory()) continue;
      const src = path.join(areaDir, pkg.name, 'src');
      if (existsSync(src)) walk(src, found);
    }
  }
  return found.map((f) => path.relative(root, f).split(path.sep).join('/')).sort();
}

function walk(dir, found) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'test') walk(full, found);
    } else if (SOURCE.test(entry.name) && !NOT_SHIPPED.test(entry.name)) {
      found.push(full);
    }
  }
}

/** A readable name for a function-like node: `Class.method`, `outer > inner`, `(arrow)`. */
function nameOf(node) {
  const own = (n) => {
    if (n.name && (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name))) return n.name.text;
    if (n.name && ts.isPrivateIdentifier(n.name)) return n.name.text;
    if (ts.isConstructorDeclaration(n)) return 'constructor';
    const parent = n.parent;
    if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) {
      return parent.name.text;
    }
    if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) {
      return parent.name.text;
    }
    if (parent && ts.isPropertyDeclaration(parent) && ts.isIdentifier(parent.name)) {
      return parent.name.text;
    }
    if (parent && ts.isCallExpression(parent)) {
      return `(callback of ${parent.expression.getText().slice(0, 40)})`;
    }
    return '(anonymous)';
  };
  const parts = [own(node)];
  for (let p = node.parent; p; p = p.parent) {
    if (ts.isClassLike(p)) {
      parts[0] = `${p.name ? p.name.text : '(class)'}.${parts[0]}`;
      break;
    }
    if (isFunctionLike(p)) {
      parts.unshift(nameOf(p));
      break;
    }
  }
  return parts.join(' > ');
}

function isFunctionLike(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** The findings of one file: its length and every function body over the limit. */
export function measureFile(file, text) {
  const findings = [];
  const lines = lineCount(text);
  if (lines > MAX_FILE_LINES) {
    findings.push({ file, name: undefined, kind: 'file', lines, limit: MAX_FILE_LINES });
  }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (isFunctionLike(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.body.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.body.getEnd()).line;
      const bodyLines = end - start + 1;
      if (bodyLines > MAX_FUNCTION_LINES) {
        findings.push({
          file,
          name: nameOf(node),
          kind: 'function',
          lines: bodyLines,
          limit: MAX_FUNCTION_LINES,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

/** The README.md of the package that holds `file` (`packages/x/src/...` → `packages/x`). */
function readmeOf(root, file) {
  const [area, pkg] = file.split('/');
  return path.join(root, area, pkg, 'README.md');
}

/** Text with its line wrapping and Markdown emphasis undone, so a sentence matches whole. */
function flatten(text) {
  return text.replace(/[*_`]/g, '').replace(/\s+/g, ' ');
}

/**
 * Measures every shipped source file under `root`. Returns the violations nothing excuses,
 * the ones an exception excuses, and the exceptions that are wrong (a reason missing from the
 * README, or nothing left to excuse).
 */
export function checkSizes(root = ROOT, exceptions = EXCEPTIONS) {
  const findings = sourceFiles(root).flatMap((file) =>
    measureFile(file, readFileSync(path.join(root, file), 'utf8')),
  );
  const matches = (e, f) => e.file === f.file && (e.name ?? undefined) === f.name;
  const badExceptions = [];
  const valid = [];
  for (const e of exceptions) {
    const readme = readmeOf(root, e.file);
    const text = existsSync(readme) ? flatten(readFileSync(readme, 'utf8')) : '';
    if (!e.reason || !text.includes(flatten(e.reason).trim())) {
      badExceptions.push({
        ...e,
        problem: `its reason is not a sentence of ${path.relative(root, readme)}`,
      });
    } else if (!findings.some((f) => matches(e, f))) {
      badExceptions.push({ ...e, problem: 'it excuses nothing: remove it' });
    } else valid.push(e);
  }
  const excused = findings.filter((f) => valid.some((e) => matches(e, f)));
  const violations = findings.filter((f) => !excused.includes(f));
  return { violations, excused, badExceptions };
}

function describe(f) {
  return f.kind === 'file'
    ? `${f.file}: ${f.lines} lines (limit ${f.limit})`
    : `${f.file}: ${f.name}: body of ${f.lines} lines (limit ${f.limit})`;
}

function main(argv) {
  const json = argv.includes('--json');
  const rootAt = argv.indexOf('--root');
  const root = rootAt === -1 ? ROOT : path.resolve(argv[rootAt + 1] ?? '.');
  const result = checkSizes(root, rootAt === -1 ? EXCEPTIONS : []);
  const ok = result.violations.length === 0 && result.badExceptions.length === 0;
  if (json) {
    console.log(JSON.stringify({ ok, ...result }, null, 2));
  } else {
    for (const f of result.violations) console.error(`  over: ${describe(f)}`);
    for (const e of result.badExceptions) {
      console.error(`  bad exception: ${e.file}${e.name ? ` ${e.name}` : ''}: ${e.problem}`);
    }
    for (const f of result.excused) console.log(`  excused: ${describe(f)}`);
    console.log(
      ok
        ? `check-sizes: every source file within ${MAX_FILE_LINES} lines and every function within ${MAX_FUNCTION_LINES}`
        : `check-sizes: ${result.violations.length} over the limits, ${result.badExceptions.length} bad exceptions`,
    );
  }
  return ok ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
