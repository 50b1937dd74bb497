/**
 * The one-place-per-fact check (scripts/check-facts.mjs): each rule on a small text written
 * for it, what it leaves alone (comments, paths shown with a placeholder, the layout's own
 * modules), and the repository itself, which must hold no finding.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkFacts,
  EXIT_CODE_MODULE,
  exitCodeFindings,
  LAYOUT_MODULES,
  layoutFindings,
  PROTOCOL_MODULE,
  protocolFindings,
} from '../../../scripts/check-facts.mjs';
import { ROOT } from '../../../scripts/check-sizes.mjs';

const exec = promisify(execFile);
const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** Source text with `#{` for a template's `${` (a test's string must not look like a template). */
const source = (text: string) => text.replaceAll('#{', '$' + '{');

const lineNumbers = (file: string, text: string) =>
  layoutFindings(file, text).map((finding) => finding.line);

describe('check-facts', () => {
  it('finds a zoott path built by hand, in a string or a template', () => {
    const text = [
      "const a = '/zoott_p';",
      source('const b = `/zoott_#{world}`;'),
      source('const c = `#{x}/zoott_w/#{world}`;'),
      "const d = 'zoott_';",
    ].join('\n');
    expect(lineNumbers('packages/cli/src/a.ts', text)).toEqual([1, 2, 3, 4]);
  });

  it("finds an area's letter handed to the layout, and entry names parsed outside core", () => {
    const text = [
      "const dir = layout.bucketPath('w', 3);",
      "const rec = layout.recordPath('c', key);",
      "const top = areaParent('workers');",
      'const entry = parseEntryName(name);',
      'const prefix = entryPrefix(kind, 0, key);',
    ].join('\n');
    expect(lineNumbers('packages/dashboard/src/a.ts', text)).toEqual([1, 2, 3, 4, 5]);
    // Core's engine writes and reads entry names; letters stay the layout's even there.
    expect(lineNumbers('packages/core/src/engine/queue.ts', text)).toEqual([1, 2, 3]);
  });

  it('leaves comments, placeholder paths, roles and the layout modules alone', () => {
    const text = [
      '// the claims live at /zoott_w/<world>/<bucket>',
      source('/* `/zoott_#{world}` */'),
      "const help = 'the world to serve (/zoott_<world>)';",
      'const dir = layout.bucketPath(AREA.working, 3);',
      "const metric = 'zoott_worker_tasks_total';",
      "const probe = '/zoott-self-check';",
    ].join('\n');
    expect(layoutFindings('packages/cli/src/a.ts', text)).toEqual([]);
    for (const file of LAYOUT_MODULES)
      expect(layoutFindings(file, "const a = '/zoott_p'; const b = bucketPath('p', 1);")).toEqual(
        [],
      );
  });

  it('finds an exit code defined beside the one table, and leaves names of its rows alone', () => {
    const text = [
      'process.exit(4);',
      'process.exitCode = 0;',
      'const EXIT_AMQP_TLS = 4;',
      'process.exit(ExitCode.AUTH);',
      'process.exitCode = ExitCode.OK;',
      '// process.exit(1) on a second signal',
      "spawn('node', ['-e', 'process.exit(3)']);",
      'const result = { exit: 127 };',
    ].join('\n');
    expect(exitCodeFindings('apps/worker/src/bin.ts', text).map((f) => f.line)).toEqual([1, 2, 3]);
    expect(exitCodeFindings(EXIT_CODE_MODULE, text)).toEqual([]);
  });

  it("finds a ZooKeeper protocol number in the adapter outside zk-wire's table", () => {
    const text = [
      'const NO_NODE = -101;',
      'if (reply.err === -112) lost();',
      'const OP_PING = 11;',
      'const at = name.indexOf(mark) === -1;',
      'const CLOSE_WAIT_MS = 3000;',
      'const INT = 0;',
      'const left = total - 2;',
    ].join('\n');
    const file = 'packages/zk-adapter/src/session.ts';
    expect(protocolFindings(file, text).map((f) => f.line)).toEqual([1, 2, 3]);
    expect(protocolFindings(PROTOCOL_MODULE, text)).toEqual([]);
    expect(protocolFindings('packages/core/src/contract/errors.ts', text)).toEqual([]);
  });

  it('finds nothing in the repository', () => {
    expect(checkFacts(ROOT)).toEqual([]);
  });

  it('the command exits 1 and names the line of a finding; 0 on a clean tree', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'zoott-check-facts-'));
    roots.push(root);
    const file = path.join(root, 'packages/a/src/bad.ts');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, "export const x = 1;\nexport const top = '/zoott_p';\n");
    const script = path.join(ROOT, 'scripts/check-facts.mjs');
    const failed = await exec(process.execPath, [script, root]).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stdout: string }).stdout).toContain('packages/a/src/bad.ts:2: layout:');
    writeFileSync(file, 'export const x = 1;\n');
    const ok = await exec(process.execPath, [script, root, '--json']);
    expect(JSON.parse(ok.stdout)).toEqual({ findings: [] });
  });
});
