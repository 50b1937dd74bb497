#!/usr/bin/env node
// No module-level mutable state in core: what belongs to one engine lives on that engine, so
// two Engine objects in one process (two worlds, two tests, a worker and a producer) never see
// each other's state. Over core's shipped source (packages/core/src), a finding is
//
// - a top-level `let` or `var` (a module variable that is assigned again), or
// - a top-level `const` holding a new collection (`new Map/Set/WeakMap/WeakSet/Array`, or an
//   array literal) that the module mutates (`.set`, `.add`, `.delete`, `.push`, `x[i] = ...`).
//
// A read-only table (`const CODES = new Set([...])`, never changed) is no state. The few pieces
// that are per process on purpose are named in ALLOWED, each with its reason.
// `node scripts/check-module-state.mjs [root] [--json]` exits 1 on a finding.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, sourceFiles } from './check-sizes.mjs';

const ts = createRequire(import.meta.url)('typescript');

/** Where the rule holds. */
export const CORE_SOURCE = 'packages/core/src/';

/** Module-level state kept on purpose: `file` and variable `name`, with why it is per process. */
export const ALLOWED = [
  {
    file: 'packages/core/src/engine/held-claims.ts',
    name: 'claimsHere',
    reason:
      "per coordinator by design: it tells this process's live claims (of any engine on the coordinator's one session) from orphans of that session",
  },
  {
    file: 'packages/core/src/contract/paths.ts',
    name: 'slab',
    reason: "encodeJson's buffer pool: an allocation pool with no meaning, like Node's Buffer pool",
  },
  {
    file: 'packages/core/src/contract/paths.ts',
    name: 'slabUsed',
    reason: "encodeJson's buffer pool: how much of the current slab is handed out",
  },
  {
    file: 'packages/core/src/recipes/lock-id/lock-id.ts',
    name: 'fallbackNodeId',
    reason: "zkutil's lock id is per process (host, pid and a counter)",
  },
  {
    file: 'packages/core/src/recipes/lock-id/lock-id.ts',
    name: 'counter',
    reason: "zkutil's lock id is per process (host, pid and a counter)",
  },
  {
    file: 'packages/core/src/recipes/lock-id/host-info.ts',
    name: 'cached',
    reason: "the host's addresses, read once per process as zkutil does",
  },
  {
    file: 'packages/core/src/engine/task-spans.ts',
    name: 'traces',
    reason:
      'a side table keyed by the claim value: a trace lives and goes with its one claim, shared by no other claim or engine',
  },
];

const COLLECTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Array']);
const MUTATORS = new Set([
  'set',
  'add',
  'delete',
  'clear',
  'push',
  'pop',
  'shift',
  'unshift',
  'splice',
  'sort',
  'reverse',
  'fill',
  'copyWithin',
]);

const isAllowed = (file, name) => ALLOWED.some((a) => a.file === file && a.name === name);

/** Whether `init` makes a new collection. */
function isCollection(init) {
  if (!init) return false;
  let node = init;
  while (
    ts.isAsExpression(node) ||
    ts.isSatisfiesExpression?.(node) ||
    ts.isParenthesizedExpression(node)
  )
    node = node.expression;
  if (ts.isArrayLiteralExpression(node)) return true;
  return (
    ts.isNewExpression(node) &&
    ts.isIdentifier(node.expression) &&
    COLLECTIONS.has(node.expression.text)
  );
}

/** Names among `names` that the module mutates (a mutating call, or a write through them). */
function mutatedNames(sourceFile, names) {
  const mutated = new Set();
  const target = (expr) => {
    while (ts.isPropertyAccessExpression(expr) || ts.isElementAccessExpression(expr))
      expr = expr.expression;
    return ts.isIdentifier(expr) && names.has(expr.text) ? expr.text : null;
  };
  const visit = (node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      MUTATORS.has(node.expression.name.text)
    ) {
      const name = target(node.expression.expression);
      if (name) mutated.add(name);
    }
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      node.operatorToken.kind <= ts.SyntaxKind.LastAssignment &&
      (ts.isPropertyAccessExpression(node.left) || ts.isElementAccessExpression(node.left))
    ) {
      const name = target(node.left);
      if (name) mutated.add(name);
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return mutated;
}

/** Findings of one file of core (any file: the caller picks them). */
export function moduleStateFindings(file, text) {
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const findings = [];
  const collections = new Map();
  const lineOf = (node) =>
    sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
  for (const statement of sourceFile.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const list = statement.declarationList;
    const mutable = (list.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const)) !== ts.NodeFlags.Const;
    for (const decl of list.declarations) {
      if (!ts.isIdentifier(decl.name)) continue;
      const name = decl.name.text;
      if (isAllowed(file, name)) continue;
      if (mutable)
        findings.push({
          rule: 'module-state',
          file,
          line: lineOf(decl),
          what: `a top-level \`${list.flags & ts.NodeFlags.Let ? 'let' : 'var'} ${name}\`: state of the whole process`,
        });
      else if (isCollection(decl.initializer)) collections.set(name, decl);
    }
  }
  const mutated = mutatedNames(sourceFile, new Set(collections.keys()));
  for (const [name, decl] of collections)
    if (mutated.has(name))
      findings.push({
        rule: 'module-state',
        file,
        line: lineOf(decl),
        what: `a top-level collection \`${name}\` the module changes: state of the whole process`,
      });
  return findings.sort((a, b) => a.line - b.line);
}

/** Every finding over core's shipped source below `root`. */
export function checkModuleState(root = ROOT) {
  const findings = [];
  for (const file of sourceFiles(root)) {
    if (!file.startsWith(CORE_SOURCE) || !/\.[cm]?tsx?$/.test(file) || file.endsWith('.d.ts'))
      continue;
    findings.push(...moduleStateFindings(file, readFileSync(path.join(root, file), 'utf8')));
  }
  return findings;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rootArg = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
  const findings = checkModuleState(rootArg ? path.resolve(rootArg) : ROOT);
  if (process.argv.includes('--json')) console.log(JSON.stringify({ findings }, null, 2));
  else {
    for (const f of findings) console.log(`${f.file}:${f.line}: ${f.rule}: ${f.what}`);
    console.log(
      findings.length === 0
        ? 'check-module-state: no module-level state in core outside the allow list'
        : `check-module-state: ${findings.length} finding(s)`,
    );
  }
  process.exitCode = findings.length === 0 ? 0 : 1;
}
