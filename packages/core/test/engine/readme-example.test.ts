import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshChroot } from '@zoott/testing';
import { afterEach, expect, inject, it, vi } from 'vitest';
import { eventually } from './helpers.js';

const rootReadme = fileURLToPath(new URL('../../../../README.md', import.meta.url));
const coreReadme = fileURLToPath(new URL('../../README.md', import.meta.url));

/** The first ```ts block under `heading` of a README, as written. */
function example(readme: string, heading: string): string {
  const text = readFileSync(readme, 'utf8');
  const at = text.indexOf(heading);
  const match = at < 0 ? null : /```ts\n([\s\S]*?)\n```/.exec(text.slice(at));
  if (!match?.[1]) throw new Error(`${readme}: no \`\`\`ts block under "${heading}"`);
  return match[1];
}

/** Runs a README block as a module of its own (vitest compiles it), with console.log captured. */
async function run(code: string): Promise<unknown[][]> {
  const logs: unknown[][] = [];
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args));
  const dir = mkdtempSync(join(tmpdir(), 'zoott-readme-'));
  dirs.push(dir);
  const file = join(dir, 'example.ts');
  writeFileSync(file, code);
  await import(/* @vite-ignore */ file);
  return logs;
}

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// The root README's library example runs as written (in memory: ZK unset), and does what
// its comments say: the child runs after its parent, the typed record shows the result.
it('the README example queues a tree and runs it through a worker', async () => {
  const saved = process.env.ZK;
  delete process.env.ZK;
  try {
    const logs = await run(example(rootReadme, '## In your own code'));
    await eventually(() => logs.some((l) => l[0] === 'completed'));
    expect(logs).toEqual([
      ['requestFile_a', { size: 'https://x/a'.length }],
      ['downloadFile_a', { saved: '/tmp/downloadFile_a' }],
      ['completed', '/tmp/downloadFile_a'],
    ]);
  } finally {
    if (saved !== undefined) process.env.ZK = saved;
  }
});

// The root README's waitFor example runs as written (in memory) and prints what it says.
it('the README waitFor example waits for one task and prints its result', async () => {
  const saved = process.env.ZK;
  delete process.env.ZK;
  try {
    const logs = await run(example(rootReadme, '## Waiting for one task'));
    expect(logs).toEqual([['/out/report_q3-12p.pdf']]);
  } finally {
    if (saved !== undefined) process.env.ZK = saved;
  }
});

// The package README's example runs to its end (it awaits the worker) and logs the result.
it('the @zoott/core README example runs a typed tree to completion', async () => {
  const logs = await run(example(coreReadme, '## Example'));
  expect(logs).toEqual([['https://example.org/a'.length]]);
});

// The root README's three-level pipeline runs as written, in memory and on the real
// ZooKeeper: each child computes from its parent's (and grandparent's) result.
it.each(['memory', 'zookeeper'] as const)(
  "the README pipeline's children use their parents' results (%s)",
  async (where) => {
    const saved = process.env.ZK;
    if (where === 'zookeeper')
      process.env.ZK = (await freshChroot(inject('zkConnect'), 'readme')).connectString;
    else delete process.env.ZK;
    try {
      const logs = await run(
        example(rootReadme, "## A pipeline: children use their parents' results"),
      );
      expect(logs).toEqual([
        [{ lines: 19, via: 'downloadFile_a < requestFile_a' }],
        [{ lines: 19, via: 'downloadFile_b < requestFile_b' }],
      ]);
    } finally {
      if (saved !== undefined) process.env.ZK = saved;
      else delete process.env.ZK;
    }
  },
);
