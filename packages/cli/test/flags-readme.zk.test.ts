import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, type Engine, readRetention } from '@zoott/core';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type ExampleStep, helpExamples, runExamples, settleTask } from './help-examples.js';
import { assertBuilt, freshConnect, session, zoott } from './helpers.js';

// The example column of the README's verb table, run as written through the built binary
// on the real ZooKeeper (ZOOTT_CONNECT names the test's namespace, ZOOTT_WORLD=files), each
// checked against what ZooKeeper then holds. Examples a verb's --help also shows are run by
// flags-examples.zk.test.ts; the few that are not run here name the test that runs their kind.
const README = fileURLToPath(new URL('../README.md', import.meta.url));
const SLOW = 600_000;

const NOT_RUN: Record<string, string> = {
  'zoott submit job.json --wait --timeout 600':
    'needs a zoott-worker serving jobs: operator-surface.zk.test.ts runs submit --wait --timeout',
  'zoott watch --json --count 100':
    'waits for 100 events: verbs.zk.test.ts and outage.zk.test.ts run watch --json --count N',
  'zoott dashboard --world files --read-only':
    'a server: flags-dashboard.zk.test.ts runs the --help form, with --connect',
};

/** The `zoott ...` code spans of the example column of the README's "## Verbs" table. */
function tableExamples(): string[] {
  const lines = readFileSync(README, 'utf8').split('\n');
  const out: string[] = [];
  for (const line of lines.slice(lines.indexOf('## Verbs') + 1)) {
    if (line.startsWith('## ')) break;
    const cell = line.replaceAll('\\|', '\0').split('|')[2] ?? '';
    for (const m of cell.matchAll(/`(zoott [^`]*)`/g)) out.push(m[1]!.replaceAll('\0', '|'));
  }
  return out;
}

const FETCH_CHILD = ['fetch_a', 'dl_a'];
const state = async (engine: Engine, key: string[]) => (await engine.task(key))?.state ?? 'gone';

const STEPS: Record<string, ExampleStep> = {
  'zoott init files --buckets 64': {
    check: async (_r, { c }) => expect(await c.children('/zoott_p/files')).toHaveLength(64),
  },
  'zoott queue fetch_a -t fetch -d @a.json -p 5 --attempts 5 --hint server=h1': {
    before: async ({ cwd }) => writeFileSync(join(cwd, 'a.json'), '{"url":"http://x/a"}'),
    check: async (_r, { engine }) =>
      expect(await engine.task(['fetch_a'])).toMatchObject({
        type: 'fetch',
        data: { url: 'http://x/a' },
        priority: 5,
        maxAttempts: 5,
        hints: { server: 'h1' },
      }),
  },
  'zoott queue report -t report --delay 30s': {
    check: async (_r, { engine }) => {
      const notBefore = (await engine.task(['report']))?.notBefore ?? 0;
      const queuedAt = (await engine.task(['report']))?.queuedAt ?? 0;
      expect(notBefore - queuedAt).toBeGreaterThanOrEqual(29_000);
    },
  },
  "zoott queue dl -t dl --parent-name 'fetch_(.*)' --parent-type fetch --child-name 'dl_{1}'": {
    check: async (_r, { engine }) =>
      expect(await engine.task(FETCH_CHILD)).toMatchObject({ type: 'dl' }),
  },
  'zoott tree fetch_a': { check: (r) => expect(r.stdout).toMatch(/fetch_a[\s\S]*dl_a/) },
  "zoott show 'fetch_a|dl_a'": { check: (r) => expect(r.stdout).toMatch(/\bdl\b/) },
  'zoott ls failed': {
    before: async ({ engine }) => {
      // dl_a runs once fetch_a is done; it then fails for good. fetch_a is hinted to h1.
      await settleTask(engine, ['fetch_a'], 'complete', 'h1');
      await settleTask(engine, FETCH_CHILD, 'fail', 'h1');
    },
    check: (r) => expect(r.stdout).toMatch(/^fetch_a\|dl_a\b/m),
  },
  "zoott retry 'fetch_a|dl_a'": {
    check: async (_r, { engine }) => expect(await state(engine, FETCH_CHILD)).toBe('pending'),
  },
  'zoott cancel fetch_a --subtree': {
    check: async (_r, { engine }) => expect(await state(engine, FETCH_CHILD)).not.toBe('pending'),
  },
  'zoott pause files --type downloadFile': {
    check: async (_r, { engine }) =>
      expect(await engine.pauseState()).toEqual({ world: false, types: ['downloadFile'] }),
  },
  'zoott resume files': {
    check: async (_r, { engine }) =>
      expect(await engine.pauseState()).toEqual({ world: false, types: [] }),
  },
  'zoott retention files --completed 24h --max-completed 100000 --results 1h --max-results 5000 --max-failed 1000':
    {
      check: async (_r, { c }) =>
        expect((await readRetention(c, 'files')).settings).toEqual({
          completed: { maxAgeMs: 86_400_000, maxCount: 100_000 },
          results: { maxAgeMs: 3_600_000, maxCount: 5000 },
          failed: { warnCount: 1000 },
        }),
    },
  'zoott clean files --completed --older-than 1h --dry-run': {
    before: async ({ engine }) => {
      await engine.queue({ name: 'fresh', type: 't' });
      await settleTask(engine, ['fresh'], 'complete', 'h1');
    },
    // Completed a moment ago: younger than an hour, so nothing would go, and nothing does.
    check: async (r, { engine }) => {
      expect(r.stdout).toMatch(/^completed: would remove 0 of 0 matching$/m);
      expect((await engine.counts()).completed).toBe(1);
    },
  },
  'zoott wait nightly --exchange reports --timeout 60': {
    publish: {
      address: { routingkey: 'nightly', exchange: 'reports' },
      result: { nightly: 'ok' },
    },
    check: (r) => expect(r.stdout).toMatch(/"nightly":\s*"ok"/),
  },
  'zoott lock nightly --timeout 30 -- ./backup.sh': {
    before: async ({ cwd }) => {
      writeFileSync(join(cwd, 'backup.sh'), '#!/bin/sh\necho ran > backup.out\n');
      chmodSync(join(cwd, 'backup.sh'), 0o755);
    },
    check: (_r, { cwd }) => expect(readFileSync(join(cwd, 'backup.out'), 'utf8')).toBe('ran\n'),
  },
  'zoott --auth alice:s3cret doctor files --repair': {
    // On a world locked to alice (the README's lock-down row), the check finds nothing.
    before: async ({ env }) => {
      const r = await zoott(['--auth', 'alice:s3cret', 'lock-down', 'files'], { env });
      expect(r.code, r.stderr).toBe(0);
    },
    check: (r) => expect(r.stdout).toBe('world files: no problems found\n'),
  },
  'zoott demo --items 24 --workers 4': {
    // With no connect string, as on a machine without ZooKeeper: embedded.
    env: { ZOOTT_CONNECT: undefined, ZOOTT_WORLD: undefined },
    check: (r) => expect(r.stdout).toMatch(/summary {2}72 completed, 0 failed/),
  },
};

describe("the README's verb table examples, as written", { timeout: SLOW }, () => {
  let examples: string[];
  let help: Set<string>;
  beforeAll(async () => {
    assertBuilt();
    examples = tableExamples();
    help = new Set(await helpExamples());
  });

  it('each is run here, by the --help examples test, or names the test that runs its kind', () => {
    expect(examples.length).toBeGreaterThan(30);
    const missing = examples.filter((e) => !help.has(e) && !(e in STEPS) && !(e in NOT_RUN));
    expect(missing).toEqual([]);
    // And nothing listed here that the README no longer shows.
    const shown = new Set(examples);
    expect([...Object.keys(STEPS), ...Object.keys(NOT_RUN)].filter((e) => !shown.has(e))).toEqual(
      [],
    );
  });

  it('runs each, in order, and checks what it left in ZooKeeper', async () => {
    const connect = await freshConnect();
    const cwd = mkdtempSync(join(tmpdir(), 'zoott-readme-'));
    onTestFinished(() => rmSync(cwd, { recursive: true, force: true }));
    const c = await session(connect);
    const env = { ZOOTT_CONNECT: connect, ZOOTT_WORLD: 'files' };
    await runExamples(STEPS, { connect, cwd, c, env, engine: createEngine(c, { world: 'files' }) });
  });
});
