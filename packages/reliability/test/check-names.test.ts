/**
 * The one-letter-name check (scripts/check-names.mjs): what it finds, what it allows (loop
 * indices, one-line lambdas, comparator pairs, `_`), the covered folders of the repository
 * itself, which must hold none, and the command failing on a deliberate violation.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  COVERED,
  checkNames,
  isCovered,
  NOT_YET,
  shortNames,
} from '../../../scripts/check-names.mjs';
import { ROOT } from '../../../scripts/check-sizes.mjs';

const exec = promisify(execFile);
const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const found = (text: string) =>
  shortNames('packages/a/src/a.ts', text).map((name) => `${name.line} ${name.kind} ${name.name}`);

describe('check-names', () => {
  it('finds one-letter variables, parameters, catch bindings, functions and classes', () => {
    const text = [
      'const c = connect();',
      'function run(s: string, { d }: { d: number }) { return s; }',
      'try { run(); } catch (e) { throw e; }',
      'function h() {}',
      'class K {}',
      'const [k, v] = pair;',
      'for (const n of names) use(n);',
      'const f = (x: number) => {\n  return x;\n};',
    ].join('\n');
    expect(found(text)).toEqual([
      '1 variable c',
      '2 parameter s',
      '2 parameter d',
      '3 catch e',
      '4 declaration h',
      '5 declaration K',
      '6 variable k',
      '6 variable v',
      '7 variable n',
      '8 variable f',
      '8 parameter x',
    ]);
  });

  it('allows loop indices, one-line lambdas, comparator pairs and _', () => {
    const text = [
      'for (let i = 0, j = 1; i < 3; i++) use(i, j);',
      'const keys = tasks.map((t) => t.key);',
      'items.sort((a, b) => {\n  return a.at - b.at;\n});',
      'const byAge = (a: Task, b: Task): number => {\n  return a.at - b.at;\n};',
      'const order: (a: Task, b: Task) => number = (a, b) => {\n  return a.at - b.at;\n};',
      'for (const [_, value] of entries) use(value);',
      'const coordinator = connect();',
    ].join('\n');
    expect(found(text)).toEqual([]);
  });

  it('an (a, b) pair that is not a comparator is a finding', () => {
    expect(found('function same(a: Key, b: Key): boolean {\n  return a === b;\n}')).toEqual([
      '1 parameter a',
      '1 parameter b',
    ]);
  });

  it('covers the listed folders, except the files and folders listed as not yet renamed', () => {
    const folders = ['packages/a/src'];
    const notYet = [
      { file: 'packages/a/src/left.ts', why: 'rewritten elsewhere' },
      { file: 'packages/a/src/busy', why: 'rewritten elsewhere' },
    ];
    expect(isCovered('packages/a/src/x/y.ts', folders, notYet)).toBe(true);
    expect(isCovered('packages/a/src/left.ts', folders, notYet)).toBe(false);
    expect(isCovered('packages/a/src/busy/z.ts', folders, notYet)).toBe(false);
    expect(isCovered('packages/a/src/busy-not.ts', folders, notYet)).toBe(true);
    expect(isCovered('packages/ab/src/y.ts', folders, notYet)).toBe(false);
  });

  it('every listed folder is shipped source, and a place not yet renamed says why and has names left', () => {
    const all = checkNames(ROOT, { all: true });
    for (const left of NOT_YET) {
      expect(left.why.length).toBeGreaterThan(10);
      const within = (file: string) => file === left.file || file.startsWith(`${left.file}/`);
      expect(all.some((name) => within(name.file))).toBe(true);
    }
    for (const folder of COVERED) expect(folder).toMatch(/^(packages|apps)\/[^/]+\/src(\/|$)/);
  });

  it('finds no one-letter name in the covered folders of the repository', () => {
    expect(checkNames(ROOT)).toEqual([]);
  });

  it('the command exits 1 and names the line of a one-letter name; 0 on a clean tree', async () => {
    expect(COVERED.length).toBeGreaterThan(0);
    const root = mkdtempSync(path.join(tmpdir(), 'zoott-check-names-'));
    roots.push(root);
    const file = path.join(root, COVERED[0]!, 'bad.ts');
    const shown = path.relative(root, file).split(path.sep).join('/');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(
      file,
      'export const count = 1;\nexport function f(s: string) {\n  return s;\n}\n',
    );
    const script = path.join(ROOT, 'scripts/check-names.mjs');
    const failed = await exec(process.execPath, [script, root]).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: 1 });
    const stdout = (failed as { stdout: string }).stdout;
    expect(stdout).toContain(`${shown}:2: declaration 'f'`);
    expect(stdout).toContain(`${shown}:2: parameter 's'`);
    writeFileSync(file, 'export function named(text: string) {\n  return text;\n}\n');
    const ok = await exec(process.execPath, [script, root, '--json']);
    expect(JSON.parse(ok.stdout)).toMatchObject({ findings: [] });
  });
});
