/**
 * Packages as a user gets them: every public package packed (`pnpm pack`, as a publish does),
 * installed with npm into a fresh project (zoott packages only from these tarballs, through a
 * local registry for the @zoott scope; everything else from the real registry), then used
 * there against the run's real ZooKeeper. A fix that lives only in the workspace (a pnpm
 * patch, a path alias, a hoisted dependency) fails here.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freshChroot } from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type PackedPackage,
  packPublic,
  privatePackages,
  ROOT,
  unwantedFiles,
} from '../../../scripts/pack-public.mjs';
import { codeUnderHeading } from './support/readme-code.js';
import { startScopeRegistry } from './support/scope-registry.js';

const exec = promisify(execFile);
// npm from the registry: minutes on a cold cache, well under one on a warm one.
const INSTALL_TIMEOUT = 900_000;
const STEP = 240_000;

/** The environment of a user's shell: nothing from pnpm, vitest or zoott's own variables. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|pnpm_|ZOOTT_|VITEST|FORCE_COLOR)/i.test(k)) env[k] = v;
  return { ...env, NO_COLOR: '1', ...extra };
}

interface Ran {
  stdout: string;
  stderr: string;
}

async function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  timeout = STEP,
): Promise<Ran> {
  try {
    return await exec(cmd, args, { cwd, env: userEnv(env), timeout, maxBuffer: 64 << 20 });
  } catch (err) {
    const e = err as Error & Partial<Ran>;
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout}\n${e.stderr}`);
  }
}

let work: string;
let project: string;
let packed: PackedPackage[];
let registry: Awaited<ReturnType<typeof startScopeRegistry>>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'zoott-pack-install-'));
  packed = packPublic(path.join(work, 'tarballs'));
  registry = await startScopeRegistry(packed.map((p) => p.tarball));
  project = path.join(work, 'app');
  mkdirSync(project);
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({
      name: 'zoott-consumer',
      private: true,
      type: 'module',
      dependencies: Object.fromEntries(packed.map((p) => [p.name, p.manifest.version])),
      devDependencies: { typescript: '~5.9.3', '@types/node': '^20.19.0' },
    }),
  );
  writeFileSync(path.join(project, '.npmrc'), `@zoott:registry=${registry.url}\n`);
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline'],
    project,
    {},
    INSTALL_TIMEOUT,
  );

  // A user's program and the root README's example, compiled as a strict TypeScript user
  // would: `tsc --strict`, and the packages' declarations checked too (no skipLibCheck).
  writeFileSync(
    path.join(project, 'consumer.ts'),
    readFileSync(new URL('./fixtures/consumer.ts', import.meta.url), 'utf8'),
  );
  writeFileSync(
    path.join(project, 'readme-example.ts'),
    codeUnderHeading(path.join(ROOT, 'README.md'), 'In your own code'),
  );
  // A CommonJS user: a .cts file, compiled to .cjs, whose imports become require() calls.
  writeFileSync(
    path.join(project, 'consumer-cjs.cts'),
    readFileSync(new URL('./fixtures/consumer-cjs.cts', import.meta.url), 'utf8'),
  );
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        types: ['node'],
        outDir: 'out',
      },
      files: ['consumer.ts', 'readme-example.ts', 'consumer-cjs.cts'],
    }),
  );
  await run(path.join(project, 'node_modules/.bin/tsc'), ['-p', '.'], project);
}, INSTALL_TIMEOUT);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await registry?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('packed and installed with npm [zookeeper, tarballs]', { timeout: STEP }, () => {
  it('ships a LICENSE in every tarball, no build state, no maps to missing sources', () => {
    for (const p of packed) {
      expect(p.files, p.name).toContain('LICENSE');
      expect(unwantedFiles(p.files), p.name).toEqual([]);
    }
    // The bundled client's licence, and zoott's changes to it, travel with the adapter.
    expect(packed.find((p) => p.name === '@zoott/zk-adapter')?.files).toEqual(
      expect.arrayContaining([
        'THIRD_PARTY_NOTICES.md',
        'dist/third-party/node-zookeeper-client/LICENSE',
        'dist/third-party/node-zookeeper-client/zoott-fixes.patch',
      ]),
    );
  });

  it('installs manifests that name no private workspace package (no devDependencies at all)', () => {
    const privateNames = privatePackages();
    expect(privateNames).toEqual(expect.arrayContaining(['@zoott/testing']));
    for (const p of packed) {
      const installed = JSON.parse(
        readFileSync(path.join(project, 'node_modules', p.name, 'package.json'), 'utf8'),
      ) as Record<string, unknown>;
      expect(installed.devDependencies, p.name).toBeUndefined();
      const named = ['dependencies', 'peerDependencies', 'optionalDependencies'].flatMap((f) =>
        Object.keys((installed[f] as Record<string, string> | undefined) ?? {}),
      );
      expect(
        named.filter((n) => privateNames.includes(n)),
        p.name,
      ).toEqual([]);
    }
  });

  it("require(): a CommonJS program (.cts, compiled by tsc) loads every entry point, runs a traced task, and zkutil's cas_loop(hosts)", async () => {
    const zk = (await freshChroot(inject('zkConnect'), 'pack-install')).connectString;
    const r = await run('node', ['out/consumer-cjs.cjs'], project, { ZK: zk });
    const out = JSON.parse(r.stdout) as {
      commonjs: boolean;
      version: string;
      recipes: string;
      zkAdapter: string;
      worldWithTilde: string;
      required: Record<string, number>;
      spans: string[];
      zkutilCounter: number | null;
      end: unknown;
    };
    expect(out).toMatchObject({
      commonjs: true,
      version: packed.find((p) => p.name === '@zoott/core')!.manifest.version,
      recipes: 'function',
      zkAdapter: 'function',
      end: { state: 'completed', result: 6 },
      // @zoott/zk-adapter/recipes, required: two increments through a hosts string.
      zkutilCounter: 2,
    });
    // @zoott/otel and its SDK starter, required: the task's spans reached the receiver.
    expect(out.spans).toEqual(expect.arrayContaining(['queue add', 'run add']));
    expect(Object.keys(out.required)).toEqual(
      expect.arrayContaining(['@zoott/otel', '@zoott/otel/sdk', '@zoott/zk-adapter/recipes']),
    );
    // Every entry point of every public package, each with its exports.
    const entries = packed.flatMap((p) =>
      Object.keys((p.manifest.exports as Record<string, unknown> | undefined) ?? {})
        .filter((k) => k !== './package.json')
        .map((k) => `${p.name}${k.slice(1)}`),
    );
    expect(Object.keys(out.required).sort()).toEqual(entries.sort());
    for (const [spec, count] of Object.entries(out.required))
      expect(count, spec).toBeGreaterThan(0);
  });

  it("one rule for world names: the library refuses '~' as the installed CLI does", async () => {
    const r = await run('node', ['out/consumer-cjs.cjs'], project);
    const { worldWithTilde } = JSON.parse(r.stdout) as { worldWithTilde: string };
    expect(worldWithTilde).toMatch(/^INVALID_CONFIG: world "a~b": must not contain '~'/);
    const cli = await exec(
      path.join(project, 'node_modules/.bin/zoott'),
      ['--world', 'a~b', 'status'],
      {
        cwd: project,
        env: userEnv(),
      },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/world "a~b": must not contain '~'/);
  });

  it('the bridge binary ships no test switch', () => {
    const dist = path.join(project, 'node_modules/@zoott/amqp-bridge-daemon/dist');
    const shipped = readdirSync(dist, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.js'));
    expect(shipped.length).toBeGreaterThan(0);
    for (const f of shipped)
      expect(readFileSync(path.join(dist, f), 'utf8'), f).not.toMatch(/TEST_PAUSE|test pause/i);
  });

  it('takes every zoott package from this build, and no node-zookeeper-client at all', () => {
    const lock = JSON.parse(readFileSync(path.join(project, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; integrity?: string }>;
    };
    const zoott = Object.entries(lock.packages).filter(([k]) => k.includes('node_modules/@zoott/'));
    expect(zoott.map(([k]) => k).sort()).toEqual(
      packed.map((p) => `node_modules/${p.name}`).sort(),
    );
    // Byte for byte the tarballs packed above.
    for (const p of packed)
      expect(lock.packages[`node_modules/${p.name}`]?.integrity, p.name).toBe(
        `sha512-${createHash('sha512').update(readFileSync(p.tarball)).digest('base64')}`,
      );
    // The adapter carries the patched client inside its dist: a registry copy would lack the fixes.
    expect(Object.keys(lock.packages).filter((k) => k.endsWith('/node-zookeeper-client'))).toEqual(
      [],
    );
  });

  it('on ZooKeeper, a stale-version multi is refused (user program compiled with tsc --strict)', async () => {
    const zk = (await freshChroot(inject('zkConnect'), 'pack-install')).connectString;
    const r = await run('node', ['out/consumer.js'], project, { ZK: zk });
    expect(JSON.parse(r.stdout)).toEqual({ staleMulti: 'BAD_VERSION', memoryTask: 'completed' });
  });

  it('runs the root README\'s "In your own code" example on ZooKeeper', async () => {
    const zk = (await freshChroot(inject('zkConnect'), 'pack-install')).connectString;
    // The example queues requestFile_a with a downloadFile child and starts a worker that
    // runs both; once the worker is drained it logs the child's typed record, stops the worker
    // and closes its connection, so the program ends by itself. The outcome is then read
    // again with the installed CLI.
    const child = spawn('node', ['out/readme-example.js'], {
      cwd: project,
      env: userEnv({ ZK: zk }),
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const zoott = path.join(project, 'node_modules/.bin/zoott');
    const show = async (key: string) =>
      JSON.parse(
        (await run(zoott, ['-c', zk, '-w', 'files', '--json', 'show', key], project)).stdout,
      );
    const exited = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), 120_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve(code ?? -1);
      });
    });
    if (exited === null) {
      const state = await show('requestFile_a|downloadFile_a').then(
        (t: { state: string }) => t.state,
        () => 'not queued',
      );
      throw new Error(`the example is still running, downloadFile_a is ${state}: ${stderr}`);
    }
    expect(exited, stderr).toBe(0);
    // Each task's result as the worker's `completed` event gives it, then the typed record.
    const lines = stdout.trim().split('\n');
    expect(lines).toEqual([
      `requestFile_a { size: ${'https://x/a'.length} }`,
      "downloadFile_a { saved: '/tmp/downloadFile_a' }",
      'completed /tmp/downloadFile_a',
    ]);
    expect(await show('requestFile_a|downloadFile_a')).toMatchObject({
      state: 'completed',
      result: { saved: '/tmp/downloadFile_a' },
    });
    expect(await show('requestFile_a')).toMatchObject({
      state: 'completed',
      result: { size: 'https://x/a'.length },
    });
  });

  it('npx zoott --version, npx zoott demo (embedded), npx zoott-worker --help', async () => {
    const cli = packed.find((p) => p.name === '@zoott/cli')!;
    expect((await run('npx', ['zoott', '--version'], project)).stdout.trim()).toBe(
      cli.manifest.version,
    );
    const demo = await run('npx', ['zoott', 'demo', '--items', '4'], project);
    expect(demo.stderr).toMatch(/embedded in-memory coordinator/);
    // What to type next, as an npm user types it.
    expect(demo.stderr).toContain('next: `npx zoott --help`');
    expect(demo.stderr).not.toMatch(/pnpm/);
    expect(demo.stdout).toMatch(/summary {2}12 completed, 0 failed/);
    const help = await run('npx', ['zoott-worker', '--help'], project);
    expect(help.stdout).toMatch(/^Usage: zoott-worker/);
    expect(help.stdout).toMatch(/--allow-exec/);
  });

  it(
    'npm install -g of the CLI tarball gives a zoott whose demo needs no ZooKeeper',
    async () => {
      const prefix = path.join(work, 'global');
      const cli = packed.find((p) => p.name === '@zoott/cli')!;
      await run(
        'npm',
        [
          'install',
          '-g',
          '--prefix',
          prefix,
          '--no-audit',
          '--no-fund',
          '--prefer-offline',
          `--@zoott:registry=${registry.url}`,
          cli.tarball,
        ],
        work,
        {},
        INSTALL_TIMEOUT,
      );
      const zoott = path.join(prefix, 'bin', 'zoott');
      expect((await run(zoott, ['--version'], work)).stdout.trim()).toBe(cli.manifest.version);
      const demo = await run(zoott, ['--json', 'demo', '--items', '3'], work);
      const out = JSON.parse(demo.stdout) as { embedded: boolean; summary: { completed: number } };
      expect(out).toMatchObject({ embedded: true, summary: { completed: 9, failed: 0 } });
      // What to type next, as a user of the global install types it.
      const text = await run(zoott, ['demo', '--items', '1'], work);
      expect(text.stderr).toContain('next: `zoott --help`');
      expect(text.stderr).not.toMatch(/pnpm|npx/);
    },
    INSTALL_TIMEOUT,
  );
});
