/**
 * The layer rules inside core (`.dependency-cruiser.cjs`, `pnpm depcruise`): each rule that
 * holds the order of core's wings fails a deliberate violation, and the imports the order
 * allows pass. A small tree shaped like packages/core/src is written for it, and the real
 * config is run on it with the real dependency-cruiser, once: every violation in the tree
 * must come back under its rule's name, and nothing else may. And the drawing of core in
 * docs/architecture.md is the one its imports make (scripts/draw-core.mjs --check).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../../scripts/check-sizes.mjs';

const exec = promisify(execFile);
const CORE = 'packages/core/src';

/** One import written into the tree: `from` imports `to` (paths under core's src). */
interface Case {
  from: string;
  to: string;
  /** The rule that must name it; none for an import the order allows. */
  rule?: string;
}

const violations: Case[] = [
  { from: 'contract/a.ts', to: 'tree/b.ts', rule: 'core-contract-imports-nothing-of-core' },
  { from: 'tree/a.ts', to: 'engine/b.ts', rule: 'core-tree-imports-contract-only' },
  { from: 'recipes/lock/a.ts', to: 'engine/b.ts', rule: 'core-recipes-import-contract-only' },
  { from: 'jobs/a.ts', to: 'engine/b.ts', rule: 'core-jobs-import-contract-and-tree' },
  { from: 'engine/a.ts', to: 'claim/claimer.ts', rule: 'core-engine-imports-no-wing-above' },
  // The engine imports no recipe: the same rule, its own case.
  { from: 'engine/c.ts', to: 'recipes/election/b.ts', rule: 'core-engine-imports-no-wing-above' },
  { from: 'claim/a.ts', to: 'front/b.ts', rule: 'core-claim-imports-engine-and-below' },
  { from: 'front/a.ts', to: 'worker/b.ts', rule: 'core-front-imports-claim-and-below' },
  {
    from: 'schedules/a.ts',
    to: 'worker/b.ts',
    rule: 'core-background-jobs-import-no-worker-or-admin',
  },
  {
    from: 'rate-limits/a.ts',
    to: 'schedules/b.ts',
    rule: 'core-background-jobs-import-no-sibling',
  },
  { from: 'worker/a.ts', to: 'admin/b.ts', rule: 'core-worker-imports-no-admin' },
  { from: 'claim/c.ts', to: 'index.ts', rule: 'core-wings-import-no-face' },
  { from: 'worker/e.ts', to: 'claim/bucket-state.ts', rule: 'core-claim-enters-by-the-claimer' },
];

/** Imports the order allows, one per floor: none may be reported. */
const allowed: Case[] = [
  { from: 'tree/c.ts', to: 'contract/b.ts' },
  { from: 'engine/d.ts', to: 'tree/b.ts' },
  { from: 'claim/d.ts', to: 'engine/b.ts' },
  { from: 'front/c.ts', to: 'claim/claimer.ts' },
  { from: 'front/d.ts', to: 'claim/late-children.ts' },
  { from: 'schedules/c.ts', to: 'front/b.ts' },
  { from: 'schedules/d.ts', to: 'recipes/election/b.ts' },
  { from: 'retention/a.ts', to: 'engine/b.ts' },
  { from: 'worker/c.ts', to: 'rate-limits/b.ts' },
  { from: 'worker/d.ts', to: 'retention/b.ts' },
  { from: 'admin/a.ts', to: 'schedules/b.ts' },
  { from: 'admin/c.ts', to: 'worker/b.ts' },
  { from: 'index.ts', to: 'admin/b.ts' },
  { from: 'engine/e.ts', to: 'version.ts' },
];

let root: string | undefined;
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Writes every case into a fresh tree (each import's target exists) and returns its root. */
function writeTree(cases: Case[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'zoott-layer-rules-'));
  const files = new Map<string, string[]>();
  for (const c of cases) {
    const spec = path.relative(path.dirname(c.from), c.to).replace(/\.ts$/, '.js');
    const line = `export * from '${spec.startsWith('.') ? spec : `./${spec}`}';`;
    files.set(c.from, [...(files.get(c.from) ?? []), line]);
    if (!files.has(c.to)) files.set(c.to, []);
  }
  for (const [file, lines] of files) {
    const full = path.join(dir, CORE, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, `${[...lines, 'export const here = 1;'].join('\n')}\n`);
  }
  return dir;
}

describe('the layer rules inside core', () => {
  it('fail a deliberate violation of each rule, under its name, and pass what the order allows', async () => {
    root = writeTree([...violations, ...allowed]);
    // As `pnpm depcruise` runs it: the default reporter, whose exit code fails the run.
    const failed = await exec(
      path.join(ROOT, 'node_modules', '.bin', 'depcruise'),
      ['--config', path.join(ROOT, '.dependency-cruiser.cjs'), 'packages'],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
    ).then(
      () => null,
      (e: { code?: number; stdout?: string }) => e,
    );
    expect(failed?.code, 'depcruise passed a tree that breaks every rule').toBeGreaterThan(0);
    const found = [...(failed?.stdout ?? '').matchAll(/^\s*error (\S+): (\S+) → (\S+)$/gm)]
      .map(([, rule, from, to]) => `${rule}: ${from} -> ${to}`)
      .sort();
    const expected = violations
      .map((c) => `${c.rule}: ${CORE}/${c.from} -> ${CORE}/${c.to}`)
      .sort();
    expect(found).toEqual(expected);
  }, 60_000);

  it('docs/architecture.md draws core as its imports are today', async () => {
    // The drawing is made from dependency-cruiser's graph; a stale one fails here.
    const run = await exec('node', [path.join(ROOT, 'scripts/draw-core.mjs'), '--check'], {
      cwd: ROOT,
    });
    expect(run.stdout).toContain('draws core as its imports are');
  }, 60_000);
});
