#!/usr/bin/env node
// Lints what a user would install: packs every public package (after `pnpm build`) and runs
// publint and Are The Types Wrong on each tarball, plus a check that no build state or
// declaration map leaks into it. Any error fails (exit 1); part of `pnpm test`.
//
// attw runs with the `node16` profile: every zoott package is ESM ("type": "module"), and its
// `exports` map has a `default` condition beside `import`, so CommonJS code can require() it
// on the Node versions the packages declare (>= 20.19, which loads ESM through require()).
// attw predates that: its `cjs-resolves-to-esm` rule (a require() that finds ESM "fails")
// is ignored, the rest of the CommonJS resolution under node16 is checked. node10 (no
// `exports` at all) is left out by the profile. attw reads the declarations only; that
// require() works at run time is proven by pack-install.test.ts (a `.cts` consumer).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packPublic, ROOT, unwantedFiles } from './pack-public.mjs';

const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);
const dest = mkdtempSync(path.join(tmpdir(), 'zoott-check-packages-'));
const failures = [];
try {
  for (const pkg of packPublic(dest)) {
    console.log(`\n── ${pkg.name} (${pkg.dir}): ${pkg.files.length} files`);
    const unwanted = unwantedFiles(pkg.files);
    if (unwanted.length > 0) failures.push(`${pkg.name}: ships ${unwanted.join(', ')}`);
    if (!pkg.files.includes('LICENSE')) failures.push(`${pkg.name}: no LICENSE in the tarball`);
    // publint exits non-zero on errors; warnings are printed and fail too (--strict).
    const publint = spawnSync(bin('publint'), ['run', pkg.tarball, '--strict'], {
      stdio: 'inherit',
    });
    if (publint.status !== 0) failures.push(`${pkg.name}: publint`);
    const attw = spawnSync(
      bin('attw'),
      // The packages ship their own types: no @types lookup (and no network) needed.
      [
        pkg.tarball,
        ...['--profile', 'node16', '--ignore-rules', 'cjs-resolves-to-esm'],
        ...['--no-definitely-typed', '--no-emoji', '--no-color'],
      ],
      { stdio: 'inherit' },
    );
    if (attw.status !== 0) failures.push(`${pkg.name}: attw`);
  }
} finally {
  rmSync(dest, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(`\ncheck-packages: ${failures.length} problem(s):\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('\ncheck-packages: every public package passes publint and attw');
