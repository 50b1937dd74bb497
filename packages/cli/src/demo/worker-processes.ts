import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../connection.js';
import { zkSecurityEnv } from '../zk-security.js';

/** A demo worker process that ended before the demo stopped it. */
export interface WorkerFailure {
  /** Its node id (`demo-p1`, ...). */
  node: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The end of what it wrote on stderr: its own account of what went wrong. */
  stderr: string;
}

/** Worker daemons started for the demo. */
export interface WorkerProcesses {
  count: number;
  /** Settles with the first worker that ends before `stop()`; never, if none does. */
  failed: Promise<WorkerFailure>;
  stop(): Promise<void>;
}

/** How much of a worker's stderr a failure keeps. */
const STDERR_TAIL = 2000;

/**
 * The environment of a demo worker: this process's, without any `ZOOTT_` variable. The demo
 * tells its workers everything they need (connection, world, handlers) with flags; a user's
 * own worker settings (a metrics port, a concurrency, a types list) are for their workers,
 * and four demo workers sharing one metrics port would all but one die at start.
 */
function workerEnv(auth: readonly string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('ZOOTT_')) env[key] = value;
  // Credentials go through the environment: a command line is readable by every local user.
  if (auth.length > 0) env.ZOOTT_AUTH = auth.join(',');
  return env;
}

/**
 * Path of the `zoott-worker` program (the `bin` of @zoott/worker, a dependency of the CLI for
 * the demo: it is run, never imported), or `null` when it is not installed or not built.
 */
export function workerBinPath(): string | null {
  try {
    const manifestPath = fileURLToPath(import.meta.resolve('@zoott/worker/package.json'));
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      bin?: Record<string, string>;
    };
    const relative = manifest.bin?.['zoott-worker'];
    if (!relative) return null;
    const bin = path.join(path.dirname(manifestPath), relative);
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

/**
 * Starts `count` `zoott-worker` processes on the world, allowed to run only the node
 * executable (the demo's jobs are `node -e`). Returns `null` when the worker package has no
 * built daemon, so the caller can fall back to in-process workers.
 */
export async function startWorkerProcesses(
  settings: Settings,
  world: string,
  count: number,
): Promise<WorkerProcesses | null> {
  const bin = workerBinPath();
  const handlersModule = fileURLToPath(new URL('./demo-handlers.js', import.meta.url));
  if (!bin || !settings.connect || !existsSync(handlersModule)) return null;
  // A config file of the demo's own, empty: no ./zoott.config.yaml or ~/.config/zoott of the
  // user's is read (see workerEnv).
  const configDir = mkdtempSync(path.join(tmpdir(), 'zoott-demo-'));
  const config = path.join(configDir, 'worker.json');
  writeFileSync(config, '{}\n');
  const env = workerEnv(settings.auth);
  // TLS and the SASL login go the same way, however the demo was given them.
  Object.assign(env, zkSecurityEnv(settings.zkSecurity.values));
  const children: ChildProcess[] = [];
  let stopping = false;
  let fail: (failure: WorkerFailure) => void = () => {};
  const failed = new Promise<WorkerFailure>((resolve) => {
    fail = resolve;
  });
  for (let i = 0; i < count; i++) {
    const node = `demo-p${i + 1}`;
    const args = [
      bin,
      ...['--config', config],
      ...['--connect', settings.connect, '--world', world, '--concurrency', '2', '--node-id', node],
      ...['--session-timeout', String(settings.sessionTimeoutMs)],
      ...['--handlers', handlersModule, '--allow-exec', process.execPath, '--log-level', 'warn'],
      // The demo's jobs are its own node scripts: they run as whoever runs the demo (a root
      // worker refuses job types unless told whom to run them as).
      ...['--run-as', userInfo().username],
    ];
    // The daemon logs JSON lines on stdout; the demo's own output is the progress and tree.
    // Its stderr passes through, and its end is kept for the demo's error if it dies.
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL);
    });
    child.once('exit', (code, signal) => {
      if (!stopping) fail({ node, code, signal, stderr: stderr.trim() });
    });
    children.push(child);
  }
  return {
    count,
    failed,
    async stop() {
      stopping = true;
      try {
        await stopAll(children);
      } finally {
        rmSync(configDir, { recursive: true, force: true });
      }
    },
  };
}

/** SIGTERM to each child (a graceful stop), SIGKILL to any still running 10 s later. */
async function stopAll(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}
