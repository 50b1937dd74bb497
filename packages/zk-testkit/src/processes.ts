import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Socket } from 'node:net';

/**
 * Every JVM and temporary folder the testkit created in this process, so nothing outlives the
 * test run: an `exit` handler kills what is left, and a watchdog per JVM covers the cases
 * where no handler runs (the test worker is killed with SIGKILL).
 */
const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
}

/** Removes the folder when this process exits (after its servers are killed). */
export function removeOnExit(dir: string): void {
  hookExit();
  tempDirs.add(dir);
}

/**
 * Registers a server process and gives it a watchdog: a tiny shell that blocks reading a pipe
 * from us; when this process dies for any reason the pipe closes and the shell kills the JVM.
 * Returns a function that retires the watchdog (call it before stopping the JVM yourself).
 */
export function guard(child: ChildProcess): () => void {
  hookExit();
  live.add(child);
  child.once('exit', () => live.delete(child));
  const pid = child.pid;
  if (pid === undefined) return () => {};
  const watchdog = spawn('/bin/sh', ['-c', 'read _ ; kill -9 "$0" 2>/dev/null', String(pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => {});
  watchdog.unref();
  (watchdog.stdin as Socket | null)?.unref();
  live.add(watchdog);
  watchdog.once('exit', () => live.delete(watchdog));
  return () => {
    watchdog.kill('SIGKILL');
  };
}

/** Resolves when the process has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}
