#!/usr/bin/env node
// Names say what they hold: fails (exit 1) when shipped source (packages/*/src, apps/*/src,
// tests excluded) in a covered folder declares a one-letter name. A reader meeting `c` has to
// find its declaration to learn whether it is a coordinator, a claim or the colours; a name
// spelled out (`coordinator`, `claim`, `colours`) says it where it is used.
//
// Allowed, because their meaning sits on the same line or is a convention every reader knows:
// - a loop index declared in a `for` header (`for (let i = 0; ...)`);
// - a parameter of a one-line expression lambda (`(x) => x.key`);
// - the comparator pair `(a, b)` of a sort callback, or of a function whose declared result is
//   a number (`(a: T, b: T) => number`);
// - `_`, a value deliberately ignored.
// Every other variable, parameter, catch binding, function or class with a one-letter name is
// a finding. Biome's naming rule cannot say "one letter", hence this pass of TypeScript's own
// parser.
//
// COVERED lists the folders held to it, NOT_YET the files and folders inside them still to
// rename; the lists grow and shrink as folders are renamed, to all of shipped source.
// `node scripts/check-names.mjs [root] [--json] [--all]`: `--all` lists the findings of every
// folder, covered or not (the to-do list), with counts by package.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { ROOT, sourceFiles } from './check-sizes.mjs';

/**
 * Folders (relative to the repository root, `/`-separated) whose shipped source must hold no
 * one-letter name. A folder covers everything below it.
 */
export const COVERED = [
  'packages/otel/src',
  'packages/core/src',
  'packages/memory-adapter/src',
  'packages/conformance/src',
  'packages/testing/src',
  'packages/zk-testkit/src',
  'packages/rabbitmq-testkit/src',
  'packages/dashboard/src',
  'packages/amqp-bridge/src',
  'packages/jobs/src',
  'packages/cli/src',
  'packages/zk-adapter/src',
  'apps/worker/src',
  'apps/amqp-bridge/src',
];

/**
 * Files or folders inside a covered folder that are not held to it yet, each with why (a
 * change rewriting them at the same time, say): they are renamed once that reason is gone.
 */
export const NOT_YET = [];

const SORTERS = new Set(['sort', 'toSorted']);

/** True for an arrow function whose expression body starts and ends on one line. */
function isOneLineLambda(fn, sourceFile) {
  if (!ts.isArrowFunction(fn) || ts.isBlock(fn.body)) return false;
  const line = (pos) => sourceFile.getLineAndCharacterOfPosition(pos).line;
  return line(fn.getStart(sourceFile)) === line(fn.getEnd());
}

/** True for a variable declared in the initializer of a `for (...; ...; ...)` header. */
function isLoopIndex(declaration) {
  const list = declaration.parent;
  return (
    ts.isVariableDeclarationList(list) &&
    list.parent !== undefined &&
    ts.isForStatement(list.parent) &&
    list.parent.initializer === list
  );
}

/** The declared result type of a function: its own annotation, or its variable's function type. */
function declaredResult(fn) {
  if (fn.type) return fn.type;
  const holder = fn.parent;
  if (
    holder &&
    ts.isVariableDeclaration(holder) &&
    holder.type &&
    ts.isFunctionTypeNode(holder.type)
  )
    return holder.type.type;
  return undefined;
}

/** True for the `(a, b)` of a comparator: a sort callback, or a function declared to return a number. */
function isComparatorPair(fn) {
  if (!ts.isFunctionLike(fn) || fn.parameters.length !== 2) return false;
  const [first, second] = fn.parameters;
  if (!ts.isIdentifier(first.name) || !ts.isIdentifier(second.name)) return false;
  if (first.name.text !== 'a' || second.name.text !== 'b') return false;
  const call = fn.parent;
  if (
    call &&
    ts.isCallExpression(call) &&
    call.arguments.includes(fn) &&
    ts.isPropertyAccessExpression(call.expression) &&
    SORTERS.has(call.expression.name.text)
  )
    return true;
  return declaredResult(fn)?.kind === ts.SyntaxKind.NumberKeyword;
}

/**
 * The one-letter names declared in one file's text: `{ file, line, name, kind }` each, kind
 * being variable, parameter, catch or declaration (a function or class).
 */
export function shortNames(file, text) {
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const note = (id, kind) => {
    if (!ts.isIdentifier(id) || id.text.length !== 1 || id.text === '_') return;
    const line = sourceFile.getLineAndCharacterOfPosition(id.getStart(sourceFile)).line + 1;
    found.push({ file, line, name: id.text, kind });
  };
  const bound = (binding, kind) => {
    if (ts.isIdentifier(binding)) note(binding, kind);
    else
      for (const element of binding.elements)
        if (!ts.isOmittedExpression(element)) bound(element.name, kind);
  };
  const visit = (node) => {
    if (ts.isVariableDeclaration(node) && !isLoopIndex(node) && !ts.isCatchClause(node.parent))
      bound(node.name, 'variable');
    else if (
      ts.isParameter(node) &&
      !isOneLineLambda(node.parent, sourceFile) &&
      !isComparatorPair(node.parent)
    )
      bound(node.name, 'parameter');
    else if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && node.name)
      note(node.name, 'declaration');
    else if (ts.isCatchClause(node) && node.variableDeclaration)
      bound(node.variableDeclaration.name, 'catch');
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** True when `file` (relative to the root) lies in one of `folders`. */
export function isCovered(file, folders = COVERED, notYet = NOT_YET) {
  const within = (place) => file === place || file.startsWith(`${place}/`);
  return folders.some(within) && !notYet.some((left) => within(left.file));
}

/** The one-letter names of the shipped source below `root`: of covered folders, or of all. */
export function checkNames(root = ROOT, { all = false, folders = COVERED, notYet = NOT_YET } = {}) {
  const findings = [];
  for (const file of sourceFiles(root)) {
    if (file.endsWith('.d.ts') || (!all && !isCovered(file, folders, notYet))) continue;
    findings.push(...shortNames(file, readFileSync(path.join(root, file), 'utf8')));
  }
  return findings;
}

/** Findings counted by package (`packages/core`), most first. */
export function countByPackage(findings) {
  const counts = new Map();
  for (const finding of findings) {
    const pkg = finding.file.split('/').slice(0, 2).join('/');
    counts.set(pkg, (counts.get(pkg) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rootArg = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
  const all = process.argv.includes('--all');
  const findings = checkNames(rootArg ? path.resolve(rootArg) : ROOT, { all });
  const byPackage = countByPackage(findings);
  if (process.argv.includes('--json'))
    console.log(JSON.stringify({ findings, byPackage }, null, 2));
  else {
    for (const f of findings) console.log(`${f.file}:${f.line}: ${f.kind} '${f.name}'`);
    if (all)
      console.log(`by package: ${byPackage.map(([pkg, count]) => `${pkg} ${count}`).join(', ')}`);
    console.log(
      findings.length === 0
        ? 'check-names: no one-letter names in the covered folders'
        : `check-names: ${findings.length} one-letter name(s)${all ? ' in all shipped source' : ''}`,
    );
  }
  // `--all` is the to-do list, not the check: it reports without failing.
  process.exitCode = findings.length === 0 || all ? 0 : 1;
}
