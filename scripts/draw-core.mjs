#!/usr/bin/env node
// Draws packages/core/src from its imports, one box per folder (a wing), as dependency-cruiser
// reads them: `pnpm draw:core` writes the Mermaid drawing into docs/architecture.md (between
// its core-wings markers) and renders docs/core-wings.svg with Graphviz's `dot` (Debian:
// `apt-get install graphviz`; without it the SVG is left as it is and the script says so).
// `--dot` prints the Graphviz source. `--check` only compares: it fails (exit 1) when the drawing in docs/architecture.md is not
// the one the imports make today, so the drawing cannot drift from the code; the test
// packages/reliability/test/layer-rules.test.ts runs it. Floors are counted from the ground:
// a folder stands one floor above the highest folder it imports.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = 'packages/core/src';
const DOC = path.join(ROOT, 'docs/architecture.md');
const SVG = path.join(ROOT, 'docs/core-wings.svg');
const START = '<!-- core-wings:start (made by `pnpm draw:core` from the imports; do not edit) -->';
const END = '<!-- core-wings:end -->';

/** Folder -> the folders its files import (from dependency-cruiser, collapsed to folders). */
function folderImports() {
  const out = execFileSync(
    path.join(ROOT, 'node_modules/.bin/depcruise'),
    [
      ...['--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
      ...['--include-only', `^${SRC}/[^/]+/`, '--collapse', `^${SRC}/[^/]+/`],
      SRC,
    ],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const name = (p) => p.slice(SRC.length + 1).replace(/\/$/, '');
  const graph = new Map();
  for (const m of JSON.parse(out).modules)
    graph.set(name(m.source), [...new Set(m.dependencies.map((d) => name(d.resolved)))].sort());
  return graph;
}

/** Lines of the .ts files under a folder, the size a reader meets. */
function linesOf(dir) {
  let files = 0;
  let lines = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      const sub = linesOf(p);
      files += sub.files;
      lines += sub.lines;
    } else if (e.name.endsWith('.ts')) {
      files += 1;
      lines += readFileSync(p, 'utf8').split('\n').length - 1;
    }
  }
  return { files, lines };
}

function floors(graph) {
  const floor = new Map();
  const of = (f, seen = new Set()) => {
    if (floor.has(f)) return floor.get(f);
    if (seen.has(f)) throw new Error(`a folder loop through ${f}: ${[...seen].join(' -> ')}`);
    seen.add(f);
    const n = Math.max(0, ...(graph.get(f) ?? []).map((d) => of(d, seen))) + 1;
    floor.set(f, n);
    return n;
  };
  for (const f of graph.keys()) of(f);
  return floor;
}

function drawing() {
  const graph = folderImports();
  const floor = floors(graph);
  const order = [...graph.keys()].sort((a, b) => floor.get(b) - floor.get(a) || a.localeCompare(b));
  const label = (f) => {
    const { files, lines } = linesOf(path.join(ROOT, SRC, f));
    return `${f}/ · ${files} ${files === 1 ? 'file' : 'files'}, ${lines} lines`;
  };
  const id = (f) => f.replace(/-/g, '_');
  const mermaid = ['```mermaid', 'flowchart TD'];
  // Names only: the drawing is checked against the code, and a line added should not fail it.
  for (const f of order) mermaid.push(`  ${id(f)}["${f}/"]`);
  for (const f of order) for (const d of graph.get(f)) mermaid.push(`  ${id(f)} --> ${id(d)}`);
  mermaid.push('```');
  const dot = [
    'digraph core {',
    '  rankdir=TB; nodesep=0.3; ranksep=0.45;',
    '  node [shape=box style="rounded,filled" fillcolor="#eef3fb" fontname="Helvetica" fontsize=11];',
    '  edge [color="#00000055" arrowsize=0.6];',
  ];
  for (const n of new Set(floor.values())) {
    const same = order.filter((f) => floor.get(f) === n).map((f) => `"${f}"`);
    dot.push(`  { rank=same; ${same.join('; ')} }`);
  }
  for (const f of order) dot.push(`  "${f}" [label="${label(f).replace(' · ', '\\n')}"];`);
  for (const f of order) for (const d of graph.get(f)) dot.push(`  "${f}" -> "${d}";`);
  dot.push('}');
  return { mermaid: mermaid.join('\n'), dot: `${dot.join('\n')}\n` };
}

function between(doc) {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/architecture.md has no ${START} ... ${END} block`);
  return {
    before: doc.slice(0, a + START.length),
    inside: doc.slice(a + START.length, b),
    after: doc.slice(b),
  };
}

const { mermaid, dot } = drawing();
if (process.argv.includes('--dot')) {
  // The Graphviz source alone, to render another way (`| dot -Tpng`).
  process.stdout.write(dot);
  process.exit(0);
}
const doc = readFileSync(DOC, 'utf8');
const parts = between(doc);
const wanted = `\n${mermaid}\n`;
if (process.argv.includes('--check')) {
  if (parts.inside !== wanted) {
    console.error(
      'draw-core: the drawing in docs/architecture.md is not the one the imports make; run `pnpm draw:core`',
    );
    process.exit(1);
  }
  console.log('draw-core: docs/architecture.md draws core as its imports are');
} else {
  writeFileSync(DOC, parts.before + wanted + parts.after);
  const svg = spawnSync('dot', ['-Tsvg'], { input: dot, encoding: 'utf8' });
  if (svg.error || svg.status !== 0) {
    console.error(
      `draw-core: docs/architecture.md written; no SVG: Graphviz's dot did not run (${svg.error?.message ?? svg.stderr})`,
    );
  } else {
    // A title as the first child: what a screen reader (and the linter) reads for the picture.
    const titled = svg.stdout.replace(
      /(<svg[^>]*>)/,
      '$1\n<title>packages/core/src: its wings and which imports which</title>',
    );
    writeFileSync(SVG, titled);
    console.log(
      `draw-core: docs/architecture.md and docs/core-wings.svg (${statSync(SVG).size} bytes)`,
    );
  }
}
