import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createEngine } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { splitCommandLine } from './help-examples.js';
import {
  assertBuilt,
  freshConnect,
  type RunResult,
  type Started,
  session,
  spawnWatched,
  stopTree,
  until,
} from './helpers.js';

// The `sh` blocks that open the root README's "On a real ZooKeeper" and the CLI README's
// "Install", read from the Markdown files and run line by line, in order, from the repository
// root through the real `pnpm` (so pnpm's passing of flags such as `-c` and `-w` to the
// script is part of what is tested), against the test's ZooKeeper. Only the server address is
// rewritten: `127.0.0.1:2181/myapp` becomes `<test server>/cli-<uuid>/myapp`, the chroot kept
// under a fresh namespace per file. `pnpm build` is this test's precondition (the tests run
// dist/), not run: a build from inside the run would rewrite dist/ under the other test files,
// and so `pnpm start`, whose script is `pnpm build && <command>`, runs its command only.
// Each line is checked by what it printed and what ZooKeeper then holds.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SLOW = 900_000;
const URL_LINE = /zoott dashboard: (http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/;

/** A command line of a block: `\` continuations joined, comment and `&` taken off. */
interface Line {
  /** As written (one line, spaces collapsed, no comment): the key of its step. */
  text: string;
  words: string[];
  background: boolean;
}

/** The command lines of the first ```sh block under `heading` in the Markdown file `file`. */
function shBlock(file: string, heading: string): Line[] {
  const md = readFileSync(ROOT + file, 'utf8');
  const fence = md.indexOf('```sh\n', md.indexOf(`\n${heading}\n`));
  if (md.indexOf(`\n${heading}\n`) < 0 || fence < 0) throw new Error(`${file}: no ${heading}`);
  const body = md.slice(fence + 6, md.indexOf('\n```', fence));
  return body
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((raw) => {
      // The comments of these blocks hold no quotes; a `#` inside quotes is not one.
      let text = raw
        .replace(/\s+#\s[^'"]*$/, '')
        .replace(/\s+/g, ' ')
        .trim();
      const background = text.endsWith(' &');
      if (background) text = text.slice(0, -2);
      return { text, words: splitCommandLine(text), background };
    })
    .filter((l) => l.text !== '');
}

/** One file's run: `chroot('/myapp')` is the connect string its `.../myapp` lines reach. */
interface Ctx {
  chroot: (path: string) => string;
}

interface RunStep {
  env?: Record<string, string>;
  check: (r: RunResult, ctx: Ctx) => Promise<void> | void;
}
interface ServeStep {
  env?: Record<string, string>;
  /** Appended to the line as written (and said why). */
  extraArgs?: string[];
  /** Waits until it serves and checks it; a line not sent to the background stops it too. */
  serving: (p: Started, ctx: Ctx) => Promise<void>;
}
type Step = RunStep | ServeStep | { precondition: () => void };

const engineAt = async (connect: string, world: string) =>
  createEngine(await session(connect), { world });

/** `pnpm zoott demo` ran its 72 tasks through 4 zoott-worker processes on `connect`. */
async function demoRan(r: RunResult, connect: string): Promise<void> {
  expect(r.stderr).toContain(`on ZooKeeper at ${connect}, 4 zoott-worker processes`);
  expect(r.stdout).toMatch(/^summary {2}72 completed, 0 failed, \d+ retried/m);
  const counts = await (await engineAt(connect, 'demo')).counts();
  expect(counts).toEqual({ pending: 0, working: 0, completed: 72, failed: 0 });
}

/** The live workers of `world` registered on `connect`, as their registry nodes hold them. */
async function registered(connect: string, world: string): Promise<{ types: string[] }[]> {
  const c = await session(connect);
  const dir = `/zoott_workers/${world}`;
  if (!(await c.exists(dir))) return [];
  const names = await c.children(dir);
  return Promise.all(
    names.map(async (n) => JSON.parse(Buffer.from((await c.get(`${dir}/${n}`)).data).toString())),
  );
}

// A root worker that may run jobs needs to be told whom to run them as: the README says so
// under the block. As root, the test does what it says (its own user, as startWorkerBin does).
const RUN_AS: Record<string, string> =
  userInfo().uid === 0 ? { ZOOTT_RUN_AS: userInfo().username } : {};

const STEPS: Record<string, Step> = {
  'pnpm build': { precondition: assertBuilt },
  'pnpm zoott --connect 127.0.0.1:2181/myapp init files': {
    check: async (r, { chroot }) => {
      expect(r.stdout).toMatch(/^world files ready \(\/zoott_files, 64 buckets\)$/m);
      expect(await (await session(chroot('/myapp'))).children('/zoott_p/files')).toHaveLength(64);
    },
  },
  "pnpm zoott-worker --connect 127.0.0.1:2181/myapp --world files --handlers examples/handlers.js --allow-exec '/usr/bin/*' --concurrency 4":
    {
      env: RUN_AS,
      serving: async (p, { chroot }) => {
        // Ready once registered, serving the type examples/handlers.js exports.
        await until(
          async () => {
            if (p.exitCode !== null) throw new Error(`the worker exited:\n${p.err()}`);
            const workers = await registered(chroot('/myapp'), 'files');
            return workers.some((w) => w.types.includes('requestFile'));
          },
          'the worker to register',
          120_000,
        );
      },
    },
  'pnpm zoott --connect 127.0.0.1:2181/myapp --world files queue requestFile_a --type requestFile':
    {
      check: async (r, { chroot }) => {
        expect(r.stdout).toMatch(/^queued requestFile_a$/m);
        // The background worker runs it with examples/handlers.js: its result says so.
        const engine = await engineAt(chroot('/myapp'), 'files');
        await until(
          async () => (await engine.task(['requestFile_a']))?.state === 'completed',
          'the worker to complete requestFile_a',
          120_000,
        );
        expect((await engine.task(['requestFile_a']))?.result).toEqual({
          accepted: 'requestFile_a',
          url: null,
        });
      },
    },
  'pnpm zoott --connect 127.0.0.1:2181/myapp --world files tree': {
    check: (r) => {
      expect(r.stdout).toMatch(/^\/zoott_files$/m);
      expect(r.stdout).toMatch(/^└── requestFile_a \(requestFile\) completed$/m);
    },
  },
  'pnpm zoott demo --connect 127.0.0.1:2181/zoott-demo': {
    check: (r, { chroot }) => demoRan(r, chroot('/zoott-demo')),
  },
  'pnpm zoott --connect 127.0.0.1:2181/myapp dashboard': {
    // 7070, the default, may be taken on the machine running the tests: any free port.
    extraArgs: ['--port', '0'],
    serving: async (p) => {
      await until(() => URL_LINE.test(p.err()), 'the dashboard URL');
      const [, url, token] = p.err().match(URL_LINE)!;
      expect((await fetch(`${url}/`)).status).toBe(401);
      const page = await fetch(`${url}/?token=${token}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toMatch(/<title>[^<]*zoott/i);
      // Without --world it shows the namespace's world: files, with the task the worker ran.
      const counts = await (await fetch(`${url}/api/counts?world=files&token=${token}`)).json();
      expect(counts).toMatchObject({ pending: 0, working: 0, completed: 1, failed: 0 });
      stopTree(p, 'SIGINT'); // Ctrl-C
      await p.exited;
      await expect(fetch(`${url}/?token=${token}`)).rejects.toThrow();
    },
  },
  // packages/cli/README.md
  'pnpm start': {
    check: (r) => {
      expect(r.stderr).toMatch(/on the embedded in-memory coordinator \(no ZooKeeper\)/);
      expect(r.stdout).toMatch(/^summary {2}72 completed, 0 failed, 4 retried/m);
    },
  },
  'pnpm zoott demo --connect 127.0.0.1:2181/demo': {
    check: (r, { chroot }) => demoRan(r, chroot('/demo')),
  },
  'pnpm zoott -c 127.0.0.1:2181/myapp -w files queue requestFile_a --type requestFile --data \'{"url":"http://x/a"}\'':
    {
      check: async (r, { chroot }) => {
        expect(r.stdout).toMatch(/^queued requestFile_a$/m);
        const task = await (await engineAt(chroot('/myapp'), 'files')).task(['requestFile_a']);
        expect(task).toMatchObject({
          state: 'pending',
          type: 'requestFile',
          data: { url: 'http://x/a' },
        });
      },
    },
  'pnpm zoott -c 127.0.0.1:2181/myapp -w files tree': {
    check: (r) => expect(r.stdout).toMatch(/^└── requestFile_a \(requestFile\) pending$/m),
  },
};

/**
 * The process a line starts: `pnpm <script> ...` from the root, in a process group of its own
 * (Ctrl-C and the clean-up reach the program pnpm runs). A script that builds first runs
 * without its build (see the top of the file).
 */
function startLine(words: string[], env: Record<string, string> = {}): Started {
  const [pnpm, script, ...rest] = words;
  if (pnpm !== 'pnpm' || script === undefined) throw new Error(`not a pnpm line: ${words}`);
  const scripts = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts;
  const body = String(scripts[script] ?? '');
  const opts = { cwd: ROOT, env, detached: true };
  if (!body.startsWith('pnpm build && ')) return spawnWatched('pnpm', words.slice(1), opts);
  const [node, ...args] = splitCommandLine(body.slice('pnpm build && '.length));
  if (node !== 'node') throw new Error(`script ${script} does not run node: ${body}`);
  return spawnWatched(process.execPath, [...args, ...rest], opts);
}

/** Runs the block's lines in order; background ones are stopped (and killed) at the end. */
async function runBlock(lines: Line[]): Promise<void> {
  const ns = await freshConnect();
  const ctx: Ctx = { chroot: (path) => ns + path };
  const background: Started[] = [];
  try {
    for (const line of lines) {
      const step = STEPS[line.text];
      if (!step) throw new Error(`no check for the README line: ${line.text}`);
      if ('precondition' in step) {
        step.precondition();
        continue;
      }
      const words = line.words.map((w) => w.replace(/^127\.0\.0\.1:2181(?=\/|$)/, ns));
      const extra = 'extraArgs' in step ? (step.extraArgs ?? []) : [];
      const p = startLine([...words, ...extra], step.env);
      if (line.background) background.push(p);
      try {
        if ('serving' in step) {
          await step.serving(p, ctx);
          if (!line.background) expect(p.exitCode ?? p.signalCode, line.text).not.toBeNull();
          continue;
        }
        if (line.background)
          throw new Error(`a background line needs a serving step: ${line.text}`);
        const r = await p.exited;
        expect(r.code, `${line.text}\n${r.stderr}`).toBe(0);
        await step.check(r, ctx);
      } catch (err) {
        throw new Error(
          `${line.text}: ${(err as Error).message}\nstdout:\n${p.out()}\nstderr:\n${p.err()}`,
        );
      } finally {
        if (!line.background) stopTree(p, 'SIGKILL');
      }
    }
    // What `kill %1` does to a shell's background job: SIGTERM, then it exits on its own.
    for (const p of background) stopTree(p, 'SIGTERM');
    await Promise.all(background.map((p) => p.exited));
  } finally {
    for (const p of background) stopTree(p, 'SIGKILL');
  }
}

const BLOCKS = {
  'README.md': () => shBlock('README.md', '## On a real ZooKeeper'),
  'packages/cli/README.md': () => shBlock('packages/cli/README.md', '## Install'),
};

describe('the READMEs’ first shell commands, as written, on a real ZooKeeper', {
  timeout: SLOW,
}, () => {
  it('every line has its check here, and every check a line', () => {
    const lines = Object.values(BLOCKS).flatMap((read) => read().map((l) => l.text));
    expect(lines.filter((l) => !(l in STEPS))).toEqual([]);
    expect(Object.keys(STEPS).filter((k) => !lines.includes(k))).toEqual([]);
  });

  for (const [file, read] of Object.entries(BLOCKS))
    it(`${file}: each line runs and leaves what it says`, () => runBlock(read()));
});
