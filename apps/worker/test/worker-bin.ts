// Starting the shipped zoott-worker in tests: one spawn with its output kept and its exit
// awaited, and the arguments a worker that runs jobs is given.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Coordinator } from '@zoott/core';
import { freshNamespace, SELF, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';

/** The daemon as shipped: the built bin (the root `pnpm test` builds before testing). */
export const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

/** Fails a suite at once, saying what to do, when the binary was not built. */
export function requireBin(): void {
  if (!existsSync(BIN))
    throw new Error(
      `${BIN} is missing: build first (pnpm build, or pnpm --filter @zoott/worker build)`,
    );
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<WorkerExit>;
  /** Everything it printed so far, stdout and stderr together. */
  output: () => string;
}

/** A config directory that does not exist: no user's own config file reaches a test worker. */
const NO_CONFIG_HOME = join(tmpdir(), 'zoott-test-no-config-home');

export interface StartOptions {
  /** Added to its environment: the test's own, without the test's ZOOTT_ variables. */
  env?: Record<string, string>;
  /** Its working directory, where it looks for `./zoott.config.yaml` (default: the test's). */
  cwd?: string;
  /**
   * A command that runs it (`ip netns exec <ns>`: a host of a namespace network); it must exec
   * node in its place, so the child's pid is the worker's.
   */
  launcher?: readonly string[];
}

/**
 * Starts the binary with `args`. A setting the caller does not give is its default: the
 * test's own ZOOTT_ variables are not passed on (a test gives a setting's variable in `env`),
 * and the user's config file (`~/.config/zoott`) is not found.
 */
export function startWorker(args: readonly string[], opts: StartOptions = {}): WorkerProcess {
  const env: NodeJS.ProcessEnv = { XDG_CONFIG_HOME: NO_CONFIG_HOME };
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('ZOOTT_') && k !== 'XDG_CONFIG_HOME') env[k] = v;
  const [command, ...prefix] = [...(opts.launcher ?? []), process.execPath];
  const child = spawn(command!, [...prefix, BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, ...opts.env },
    ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
  });
  let out = '';
  const keep = (b: Buffer) => {
    out += b.toString();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<WorkerExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => out };
}

/**
 * The arguments of a worker of `world` named `nodeId` that runs the executables `allowExec`
 * allows as the test's own user (a root worker must be told whom jobs run as).
 */
export function jobWorkerArgs(
  connect: string,
  world: string,
  nodeId: string,
  allowExec = '/bin/sh',
): string[] {
  return [
    ...['--connect', connect, '--world', world, '--node-id', nodeId],
    ...['--allow-exec', allowExec, '--run-as', SELF],
  ];
}

/**
 * Waits until `world` has at least `n` registered workers, as `client` reads the registry.
 * With `worker`, fails at once, with its output, when that worker exits first.
 */
export async function registered(
  client: Coordinator,
  world: string,
  n = 1,
  worker?: WorkerProcess,
): Promise<void> {
  await until(n === 1 ? 'the worker to register' : `${n} registered workers`, async () => {
    if (worker && worker.child.exitCode !== null)
      throw new Error(`worker exited: ${worker.output()}`);
    const names = await client.children(`/zoott_workers/${world}`).catch(() => []);
    return names.length >= n ? true : undefined;
  });
}

/** SIGKILLs each worker still running and waits until it has exited. */
export async function killWorkers(workers: Iterable<WorkerProcess>): Promise<void> {
  for (const w of workers) {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await w.exited;
  }
}

/**
 * A shell job held until the test lets it go (`sh -c HELD <dir> <name>`): it touches
 * `<dir>/<name>.started`, then runs until the test writes `<dir>/<name>.go`.
 */
export const HELD =
  'touch "$0/$1.started"; until [ -e "$0/$1.go" ]; do sleep 0.1; done; echo "$1 done"';

/** What a suite of worker processes shares, set once its `beforeAll` has run. */
export interface ProcessSuite {
  /** A fresh chroot on the run's ZooKeeper (`host:port/chroot`). */
  ns: string;
  /** A client of `ns`, the test's own. */
  client: Coordinator;
  /** A temporary directory of the suite's, removed after it. */
  dir: string;
  /** Starts the binary with `args` (see {@link startWorker}); it is SIGKILLed after the test. */
  start(args: readonly string[], opts?: StartOptions): WorkerProcess;
}

/**
 * Registers, in the calling `describe`, the frame most worker process suites repeat: the
 * binary checked, a fresh namespace with a client and a temporary directory (`zoott-<name>-`)
 * before the suite, every worker it started killed after each test, both cleaned up after.
 */
export function processSuite(name: string): ProcessSuite {
  const started: WorkerProcess[] = [];
  const suite = {
    start(args: readonly string[], opts: StartOptions = {}): WorkerProcess {
      const w = startWorker(args, opts);
      started.push(w);
      return w;
    },
  } as ProcessSuite;
  beforeAll(async () => {
    requireBin();
    suite.ns = await freshNamespace(inject('zkConnect'));
    suite.client = await connectZk(suite.ns);
    suite.dir = mkdtempSync(join(tmpdir(), `zoott-${name}-`));
  });
  afterEach(async () => {
    await killWorkers(started.splice(0));
  });
  afterAll(async () => {
    await suite.client?.close();
    if (suite.dir) rmSync(suite.dir, { recursive: true, force: true });
  });
  return suite;
}
