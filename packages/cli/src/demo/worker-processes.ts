import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../connection.js';
import { zkSecurityEnv } from '../zk-security.js';

/** Worker daemons started for the demo. */
export interface WorkerProcesses {
  count: number;
  stop(): Promise<void>;
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
  s: Settings,
  world: string,
  count: number,
): Promise<WorkerProcesses | null> {
  const bin = workerBinPath();
  const handlersModule = fileURLToPath(new URL('./demo-handlers.js', import.meta.url));
  if (!bin || !s.connect || !existsSync(handlersModule)) return null;
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    const args = [
      bin,
      ...[
        '--connect',
        s.connect,
        '--world',
        world,
        '--concurrency',
        '2',
        '--node-id',
        `demo-p${i + 1}`,
      ],
      ...['--handlers', handlersModule, '--allow-exec', process.execPath, '--log-level', 'warn'],
      // The demo's jobs are its own node scripts: they run as whoever runs the demo (a root
      // worker refuses job types unless told whom to run them as).
      ...['--run-as', userInfo().username],
    ];
    // Credentials go through the environment: a command line is readable by every local user.
    const env: NodeJS.ProcessEnv = { ...process.env, ZOOTT_AUTH: s.auth.join(',') };
    if (s.auth.length === 0) delete env.ZOOTT_AUTH;
    // So are TLS and the SASL login, however the demo was given them.
    Object.assign(env, zkSecurityEnv(s.zkSecurity.values));
    // The daemon logs JSON lines on stdout; the demo's own output is the progress and tree.
    children.push(spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env }));
  }
  return {
    count,
    async stop() {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              const kill = setTimeout(() => c.kill('SIGKILL'), 10_000);
              c.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              c.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
