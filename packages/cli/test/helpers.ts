import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Coordinator } from '@zoott/core';
import { freshChroot } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, expect, inject } from 'vitest';

/** The BUILT binary: these tests run `zoott` exactly as a user does. */
export const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
/** The built `zoott-worker`, for tests that need a real worker process. */
export const WORKER_BIN = fileURLToPath(
  new URL('../../../apps/worker/dist/bin.js', import.meta.url),
);

/**
 * Starts the real `zoott-worker` on world `tw` serving the job types for `allow` (an
 * `--allow-exec` list), quiet but for warnings. Jobs run as the test's own user: a root
 * worker must be told whom to run them as.
 */
export function startWorkerBin(connect: string, allow: string): ChildProcess {
  return spawn(
    process.execPath,
    [WORKER_BIN, '--connect', connect, '--world', 'tw', '--allow-exec', allow].concat([
      '--run-as',
      userInfo().username,
      '--log-level',
      'warn',
    ]),
    { stdio: 'ignore' },
  );
}

export function assertBuilt(): void {
  if (!existsSync(BIN))
    throw new Error(`${BIN} is missing: run \`pnpm build\` before the CLI tests`);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
  timeoutMs?: number;
}

/** Environment without anything that would point zoott somewhere else. */
function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('ZOOTT_') || k === 'FORCE_COLOR') delete env[k];
  env.NO_COLOR = '1';
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export type Started = ChildProcess & {
  out: () => string;
  err: () => string;
  exited: Promise<RunResult>;
};

const running = new Set<Started>();
afterAll(() => {
  for (const c of running) stopTree(c, 'SIGKILL');
});

/**
 * Signals `child`, or its whole process group when it was started `detached` (a command
 * such as `pnpm` runs the real program as its grandchild, which a signal to `pnpm` alone
 * would leave running), as Ctrl-C in a terminal signals the foreground group.
 */
export function stopTree(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    // The group may outlive its leader (pnpm gone, the program still running): signal it anyway.
    if (detachedChildren.has(child)) process.kill(-child.pid, signal);
    else if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  } catch {
    // Nothing of it is left (ESRCH).
  }
}
const detachedChildren = new WeakSet<ChildProcess>();

/**
 * Starts `command` with `args` in the cleaned environment; the caller reads the streams.
 * `detached` puts it in a process group of its own (see `stopTree`). Killed, with its group,
 * after the file if still running.
 */
export function spawnWatched(
  command: string,
  args: string[],
  opts: RunOptions & { detached?: boolean } = {},
): Started {
  const child = spawn(command, args, {
    env: cleanEnv(opts.env),
    cwd: opts.cwd ?? process.cwd(),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: opts.detached === true,
  });
  if (opts.detached) detachedChildren.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  else child.stdin!.end();
  const exited = new Promise<RunResult>((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(started);
      resolve({ code: code ?? (signal ? 128 : null), stdout, stderr });
    });
  });
  const started = Object.assign(child, { out: () => stdout, err: () => stderr, exited });
  running.add(started);
  return started;
}

/** Starts the binary; the caller reads the streams. Killed after the file if still running. */
export function start(args: string[], opts: RunOptions = {}): Started {
  return spawnWatched(process.execPath, [BIN, ...args], opts);
}

/** Runs `zoott <args>` to the end. */
export async function zoott(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const child = start(args, opts);
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  try {
    return await child.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `check` holds, polling; fails with `what` after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sessions: Coordinator[] = [];
afterEach(async () => {
  await Promise.allSettled(sessions.splice(0).map((c) => c.close()));
});

/** A session closed after the test. */
export async function session(connect: string): Promise<Coordinator> {
  const c = await connectZk(connect);
  sessions.push(c);
  return c;
}

/** A fresh, created chroot on the run's ZooKeeper: `host:port/cli-<uuid>`. */
export async function freshConnect(): Promise<string> {
  return (await freshChroot(inject('zkConnect'), 'cli')).connectString;
}

/**
 * `zoott` against a fresh chroot with a world `tw` made by `zoott init tw <initArgs>` (which
 * must succeed); `z` runs `zoott` there, with `input` on its stdin when given.
 */
export async function freshWorld(initArgs: string[] = []): Promise<{
  connect: string;
  z: (args: string[], input?: string) => Promise<RunResult>;
}> {
  const connect = await freshConnect();
  const z = (args: string[], input?: string) =>
    zoott(['--connect', connect, '--world', 'tw', ...args], input === undefined ? {} : { input });
  const init = await z(['init', 'tw', ...initArgs]);
  expect(init.code, init.stderr).toBe(0);
  return { connect, z };
}

/** Parses the one JSON document a --json command printed. */
export function json<T = Record<string, unknown>>(r: RunResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(
      `stdout is not one JSON document (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`,
    );
  }
}
