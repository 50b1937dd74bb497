#!/usr/bin/env node
// Type-checks every ```ts block of the repository's Markdown files against the built
// workspace packages, as a user would compile them: each block becomes its own module in a
// scratch project whose node_modules/@zoott/* link to packages/* and apps/*, so imports
// resolve through each package's `exports` to its published declarations (run after
// `pnpm build`). Compiled with `tsc --strict`, without skipLibCheck.
//
// Two comments on the line before a fence change that. A fragment that uses names from its
// surroundings (a connected `zk`, a variable of the text) gets them declared, checked with it:
//   <!-- checked-with: import type { Coordinator } from '@zoott/core'; declare const zk: Coordinator; -->
// A block that cannot compile on its own (a fragment of a config file, say) is skipped only
// when that line says why:
//   <!-- not-checked: a fragment of vitest.config.ts -->
// Usage: node scripts/check-readme-examples.mjs [file.md ...]   (default: every tracked .md)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const scratch = join(root, 'node_modules', '.cache', 'readme-examples');
const FENCE = /^```(ts|typescript)\s*$/;
const SKIP = /^<!--\s*not-checked:\s*(.*?)\s*-->$/;
const WITH = /^<!--\s*checked-with:\s*(.*?)\s*-->$/;

/** The ```ts blocks of one Markdown file, with the line of their first code line. */
export function extractBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE.test(lines[i].trim())) continue;
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    const skip = before >= 0 ? SKIP.exec(lines[before].trim()) : null;
    const prelude = before >= 0 ? WITH.exec(lines[before].trim()) : null;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    if (end === lines.length) throw new Error(`unclosed \`\`\`ts block at line ${i + 1}`);
    blocks.push({
      line: start + 1,
      code: lines.slice(start, end).join('\n'),
      skip: skip?.[1],
      prelude: prelude?.[1] ?? '',
    });
    i = end;
  }
  return blocks;
}

function markdownFiles(args) {
  if (args.length > 0) return args.map((f) => relative(root, resolve(f)));
  return execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.length > 0);
}

/** node_modules/@zoott/<name> -> the workspace package, as an install would lay them out. */
function linkWorkspacePackages(dir) {
  const at = join(dir, 'node_modules', '@zoott');
  mkdirSync(at, { recursive: true });
  for (const parent of ['packages', 'apps']) {
    const names = execFileSync('git', ['ls-files', `${parent}/*/package.json`], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f.length > 0);
    for (const pj of names) {
      const { name } = JSON.parse(readFileSync(join(root, pj), 'utf8'));
      if (!name?.startsWith('@zoott/')) continue;
      symlinkSync(join(root, dirname(pj)), join(at, name.slice('@zoott/'.length)), 'dir');
      // Their third-party dependencies too, hoisted as npm would (an example may import one).
      const { dependencies = {} } = JSON.parse(readFileSync(join(root, pj), 'utf8'));
      for (const dep of Object.keys(dependencies)) {
        const from = join(root, dirname(pj), 'node_modules', dep);
        const to = join(dir, 'node_modules', dep);
        if (dep.startsWith('@zoott/') || !existsSync(from) || existsSync(to)) continue;
        mkdirSync(dirname(to), { recursive: true });
        symlinkSync(from, to, 'dir');
      }
    }
  }
}

function main() {
  const files = markdownFiles(process.argv.slice(2));
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  linkWorkspacePackages(scratch);
  const origin = new Map();
  let skipped = 0;
  for (const file of files) {
    const blocks = extractBlocks(readFileSync(join(root, file), 'utf8'));
    blocks.forEach((b, n) => {
      if (b.skip !== undefined) {
        if (b.skip.length === 0) throw new Error(`${file}:${b.line}: not-checked needs a reason`);
        skipped++;
        return;
      }
      const name = `${file.replace(/[^A-Za-z0-9]+/g, '_')}_${n + 1}.ts`;
      // `export {}` makes every block a module of its own (top-level await, no shared names).
      // The prelude goes last (imports and declarations are hoisted), so lines keep numbers.
      writeFileSync(join(scratch, name), `${b.code}\nexport {};\n${b.prelude}\n`);
      origin.set(name, { file, line: b.line });
    });
  }
  if (origin.size === 0) {
    console.error('check-readme-examples: no ```ts block found; nothing was checked');
    process.exit(1);
  }
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
        noEmit: true,
        skipLibCheck: false,
      },
      include: ['*.ts'],
    }),
  );
  // Blocks are ES modules, as in a project with "type": "module".
  writeFileSync(join(scratch, 'package.json'), '{ "type": "module", "private": true }\n');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', scratch, '--pretty', 'false'], {
    encoding: 'utf8',
  });
  const out = `${run.stdout}${run.stderr}`.trim();
  // Report errors at their place in the Markdown file, not in the scratch copy.
  const mapped = out.replace(/^([^\s(]+\.ts)\((\d+),(\d+)\)/gm, (whole, f, l, c) => {
    const o = origin.get(f.split('/').pop());
    return o ? `${o.file}:${o.line + Number(l) - 1}:${c}` : whole;
  });
  if (run.status !== 0) {
    console.error(mapped || `tsc exited with ${run.status}`);
    console.error(`check-readme-examples: ${origin.size} blocks checked, errors above`);
    process.exit(1);
  }
  console.log(
    `check-readme-examples: ${origin.size} TypeScript blocks compile (tsc --strict), ${skipped} marked not-checked`,
  );
}

main();
