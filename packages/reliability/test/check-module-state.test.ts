/**
 * The no-module-state check (scripts/check-module-state.mjs): each rule on a small text
 * written for it, what it leaves alone (read-only tables, the allow list, code inside
 * functions), and the repository itself, which must hold no finding.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ALLOWED,
  checkModuleState,
  moduleStateFindings,
} from '../../../scripts/check-module-state.mjs';
import { ROOT } from '../../../scripts/check-sizes.mjs';

const exec = promisify(execFile);
const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const lines = (file: string, text: string) =>
  moduleStateFindings(file, text).map((finding) => finding.line);

describe('check-module-state', () => {
  it('finds a top-level let or var, and top-level collections the module changes', () => {
    const text = [
      'let calls = 0;',
      'export let last: string | undefined;',
      'var legacy = 1;',
      'const seen = new Set<string>();',
      'const byWorld = new Map<string, number>();',
      'const owners = new WeakMap<object, string>();',
      'const queue: string[] = [];',
      'const table = new Array<number>(4);',
      'export function note(world: string) {',
      '  seen.add(world);',
      '  byWorld.set(world, 1);',
      '  owners.set({}, world);',
      '  queue.push(world);',
      '  table[0] = 1;',
      '}',
    ].join('\n');
    expect(lines('packages/core/src/engine/a.ts', text)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('leaves read-only tables, state inside functions and classes, and the allow list alone', () => {
    const text = [
      "const CODES = new Set(['A', 'B']);",
      "const FIELDS = ['name', 'type'] as const;",
      'export const has = (code: string) => CODES.has(code) && FIELDS.includes(code as never);',
      'export function local() {',
      '  let n = 0;',
      '  const own = new Map<string, number>();',
      "  own.set('a', (n += 1));",
      '  return own;',
      '}',
      'export class Keeper {',
      '  private readonly seen = new Set<string>();',
      '  note(name: string) { this.seen.add(name); }',
      '}',
    ].join('\n');
    expect(moduleStateFindings('packages/core/src/engine/a.ts', text)).toEqual([]);
    for (const { file, name, reason } of ALLOWED) {
      expect(reason.length).toBeGreaterThan(20);
      expect(moduleStateFindings(file, `let ${name} = 0;\n`)).toEqual([]);
      expect(lines('packages/core/src/engine/other.ts', `let ${name} = 0;\n`)).toEqual([1]);
    }
  });

  it('finds nothing in the repository', () => {
    expect(checkModuleState(ROOT)).toEqual([]);
  });

  it('the command exits 1 and names the line of a deliberate violation in core; 0 on a clean tree', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'zoott-check-state-'));
    roots.push(root);
    const file = path.join(root, 'packages/core/src/engine/bad.ts');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(
      file,
      'export const x = 1;\nconst hints = new Set<string>();\nexport const note = (k: string) => hints.add(k);\n',
    );
    // The same text outside core is no finding: the rule is core's.
    const elsewhere = path.join(root, 'packages/cli/src/ok.ts');
    mkdirSync(path.dirname(elsewhere), { recursive: true });
    writeFileSync(elsewhere, 'let calls = 0;\nexport const next = () => ++calls;\n');
    const script = path.join(ROOT, 'scripts/check-module-state.mjs');
    const failed = await exec(process.execPath, [script, root]).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: 1 });
    const out = (failed as { stdout: string }).stdout;
    expect(out).toContain('packages/core/src/engine/bad.ts:2: module-state:');
    expect(out).not.toContain('packages/cli/src/ok.ts');
    writeFileSync(file, 'export const x = 1;\n');
    const ok = await exec(process.execPath, [script, root, '--json']);
    expect(JSON.parse(ok.stdout)).toEqual({ findings: [] });
  });
});
