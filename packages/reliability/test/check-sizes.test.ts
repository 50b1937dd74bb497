/**
 * The size check of `pnpm test` (scripts/check-sizes.mjs), on small trees written for each
 * case: what it counts, what it names, which files it leaves alone, and when an exception
 * excuses a finding. The command itself runs once on a tree, with and without `--json`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkSizes,
  MAX_FILE_LINES,
  MAX_FUNCTION_LINES,
  ROOT,
} from '../../../scripts/check-sizes.mjs';

const exec = promisify(execFile);
const roots: string[] = [];

/** A repository-shaped tree: `files` maps paths relative to its root to their text. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'zoott-check-sizes-'));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const lines = (n: number, text = 'const x = 1;') => `${Array(n).fill(text).join('\n')}\n`;

/** A function whose body (braces included) spans exactly `bodyLines` lines. */
const fn = (name: string, bodyLines: number) =>
  `export function ${name}() {\n${lines(bodyLines - 2, '  void 0;')}}\n`;

describe('check-sizes', () => {
  it('names a file over the line limit with its length, and passes one at the limit', () => {
    const root = tree({
      'packages/a/src/big.ts': lines(MAX_FILE_LINES + 1),
      'packages/a/src/fits.ts': lines(MAX_FILE_LINES),
    });
    const { violations } = checkSizes(root, []);
    expect(violations).toEqual([
      {
        file: 'packages/a/src/big.ts',
        name: undefined,
        kind: 'file',
        lines: MAX_FILE_LINES + 1,
        limit: MAX_FILE_LINES,
      },
    ]);
  });

  it('names functions, methods and arrows whose body is over the limit, with the class or outer function', () => {
    const long = lines(MAX_FUNCTION_LINES - 1, '    void 0;');
    const root = tree({
      'apps/w/src/f.ts': `${fn('tooLong', MAX_FUNCTION_LINES + 1)}${fn('justFits', MAX_FUNCTION_LINES)}`,
      'apps/w/src/c.ts': `export class Engine {\n  start(): void {\n${long}  }\n}\n`,
      'apps/w/src/a.ts': `export function outer() {\n  const inner = () => {\n${long}  };\n  return inner;\n}\n`,
    });
    const found = checkSizes(root, []).violations.map((v) => `${v.file} ${v.name} ${v.lines}`);
    expect(found.sort()).toEqual(
      [
        `apps/w/src/a.ts outer ${MAX_FUNCTION_LINES + 4}`,
        `apps/w/src/a.ts outer > inner ${MAX_FUNCTION_LINES + 1}`,
        `apps/w/src/c.ts Engine.start ${MAX_FUNCTION_LINES + 1}`,
        `apps/w/src/f.ts tooLong ${MAX_FUNCTION_LINES + 1}`,
      ].sort(),
    );
  });

  it('leaves tests, declarations and files outside packages/*/src and apps/*/src alone', () => {
    const big = lines(MAX_FILE_LINES + 1);
    const root = tree({
      'packages/a/src/thing.test.ts': big,
      'packages/a/src/types.d.ts': big,
      'packages/a/test/long.ts': big,
      'packages/a/src/test/helper.ts': big,
      'scripts/tool.ts': big,
    });
    expect(checkSizes(root, [])).toEqual({ violations: [], excused: [], badExceptions: [] });
  });

  it('excuses a finding only when the reason stands in the package README', () => {
    const reason = 'The generated table is one literal and reads best whole.';
    const root = tree({
      'packages/a/src/table.ts': lines(MAX_FILE_LINES + 1),
      // Wrapped across lines and emphasised: still the same sentence.
      'packages/a/README.md': `# a\n\nThe generated *table* is one literal\nand reads best whole.\n`,
      'packages/b/src/table.ts': lines(MAX_FILE_LINES + 1),
      'packages/b/README.md': '# b\n\nNothing about sizes here.\n',
    });
    const result = checkSizes(root, [
      { file: 'packages/a/src/table.ts', reason },
      { file: 'packages/b/src/table.ts', reason },
    ]);
    expect(result.excused.map((f) => f.file)).toEqual(['packages/a/src/table.ts']);
    expect(result.violations.map((f) => f.file)).toEqual(['packages/b/src/table.ts']);
    expect(result.badExceptions).toEqual([
      {
        file: 'packages/b/src/table.ts',
        reason,
        problem: 'its reason is not a sentence of packages/b/README.md',
      },
    ]);
  });

  it('fails an exception that excuses nothing, so the list cannot outlive a split', () => {
    const reason = 'It used to be long.';
    const root = tree({
      'packages/a/src/small.ts': lines(10),
      'packages/a/README.md': `# a\n\n${reason}\n`,
    });
    const result = checkSizes(root, [{ file: 'packages/a/src/small.ts', reason }]);
    expect(result.badExceptions).toEqual([
      { file: 'packages/a/src/small.ts', reason, problem: 'it excuses nothing: remove it' },
    ]);
  });

  // Three node processes that each load the TypeScript compiler: slow on a loaded machine.
  it('as a command: exit 1 naming file, function and length; --json says the same', {
    timeout: 120_000,
  }, async () => {
    const root = tree({ 'packages/a/src/f.ts': fn('tooLong', MAX_FUNCTION_LINES + 5) });
    const script = path.join(ROOT, 'scripts/check-sizes.mjs');
    const text = await exec(process.execPath, [script, '--root', root]).catch((e: unknown) => e);
    expect(text).toMatchObject({ code: 1 });
    expect((text as { stderr: string }).stderr).toContain(
      `packages/a/src/f.ts: tooLong: body of ${MAX_FUNCTION_LINES + 5} lines (limit ${MAX_FUNCTION_LINES})`,
    );
    const json = await exec(process.execPath, [script, '--root', root, '--json']).catch(
      (e: { stdout: string; code: number }) => e,
    );
    expect(json).toMatchObject({ code: 1 });
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      violations: [{ file: 'packages/a/src/f.ts', name: 'tooLong', lines: MAX_FUNCTION_LINES + 5 }],
    });
    const clean = tree({ 'packages/a/src/f.ts': fn('short', 3) });
    const passed = await exec(process.execPath, [script, '--root', clean, '--json']);
    expect(JSON.parse(passed.stdout)).toMatchObject({ ok: true, violations: [] });
  });
});
