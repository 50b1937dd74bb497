import { fileURLToPath } from 'node:url';
import * as core from '@zoott/core';
import * as internal from '@zoott/core/internal';
import * as recipes from '@zoott/core/recipes';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const src = (p: string) => fileURLToPath(new URL(`../src/${p}`, import.meta.url));

const packageRoots = [
  'packages/memory-adapter',
  'packages/zk-adapter',
  'packages/testing',
  'packages/conformance',
  'packages/zk-testkit',
  'packages/cli',
  'packages/jobs',
  'packages/dashboard',
  'packages/otel',
];
const rootEntry = (root: string) =>
  fileURLToPath(new URL(`../../../${root}/src/index.ts`, import.meta.url));

let program: ts.Program | undefined;
/** One program over every entry point checked here: type-checking once is the slow part. */
function sharedProgram(): ts.Program {
  program ??= ts.createProgram(
    [...['index.ts', 'recipes.ts', 'jobs.ts', 'admin.ts'].map(src), ...packageRoots.map(rootEntry)],
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
    },
  );
  return program;
}

/** Every name an entry point exports, with whether its declaration carries a JSDoc comment. */
function exportsOf(entry: string): { name: string; documented: boolean; where: string }[] {
  const checker = sharedProgram().getTypeChecker();
  const file = sharedProgram().getSourceFile(entry);
  if (!file) throw new Error(`cannot read ${entry}`);
  const moduleSymbol = checker.getSymbolAtLocation(file);
  if (!moduleSymbol) throw new Error(`${entry} is not a module`);
  return checker.getExportsOfModule(moduleSymbol).map((s) => {
    const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    const decls = target.getDeclarations() ?? [];
    const documented = decls.some((d) => {
      // A `const x = ...` keeps its comment on the statement, two levels up.
      const node = ts.isVariableDeclaration(d) ? d.parent.parent : d;
      return ts.getJSDocCommentsAndTags(node).length > 0;
    });
    const where = decls[0]?.getSourceFile().fileName.replace(/.*\/src\//, 'src/') ?? '?';
    return { name: s.getName(), documented, where };
  });
}

describe('the public API of @zoott/core', () => {
  for (const entry of ['index.ts', 'recipes.ts', 'jobs.ts', 'admin.ts']) {
    it(`documents every export of ${entry} with JSDoc`, () => {
      const all = exportsOf(src(entry));
      expect(all.length).toBeGreaterThan(10);
      const undocumented = all.filter((e) => !e.documented).map((e) => `${e.name} (${e.where})`);
      expect(undocumented).toEqual([]);
    });
  }

  it('keeps implementation details out of the root, behind subpaths', () => {
    const internals = [
      'fnv1a32',
      'chooseIp',
      'utf8Length',
      'encodeKey',
      'decodeKey',
      'parseEntryName',
      'WorldLayout',
      'Claimer',
      'validateTaskInfo',
      'requestFrameBytes',
      'codeFromZk',
      'bucketOwners',
    ];
    for (const name of internals) {
      expect(core, name).not.toHaveProperty(name);
      expect({ ...internal, ...recipes }, name).toHaveProperty(name);
    }
    for (const name of ['createEngine', 'runWorker', 'ZoottError', 'isZoottError', 'OPEN_ACL'])
      expect(core, name).toHaveProperty(name);
  });
});

// The same bar for every package a user installs: what its root exports is documented.
describe('the roots of the other workspace packages', () => {
  for (const root of packageRoots) {
    it(`documents every export of ${root} with JSDoc`, () => {
      const all = exportsOf(rootEntry(root));
      expect(all.length).toBeGreaterThan(0);
      expect(all.filter((e) => !e.documented).map((e) => `${e.name} (${e.where})`)).toEqual([]);
    });
  }
});
