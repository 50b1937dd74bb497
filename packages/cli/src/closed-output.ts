// A reader that goes away (`zoott status | head`) is not an error of zoott's: it ends quietly
// with exit 0, as Unix tools do. Node ignores SIGPIPE, so a write to a closed pipe fails with
// EPIPE instead, which unhandled crashed the CLI (exit 1, a stack trace on stderr).
import { ExitCode } from './exit-codes.js';

/** How long a verb may take to wind down after its output closed before the process ends. */
const WIND_DOWN_MS = 2000;

/**
 * Watches stdout and stderr for EPIPE: the first calls `closed` (the runner aborts the verb,
 * as on Ctrl-C, and ends with 0 without a word); a verb that has not ended `WIND_DOWN_MS`
 * later is ended then. Returns what stops that timer, for the end of `main`.
 */
export function onClosedOutput(closed: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const onError = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (timer) return;
    // Unreferenced: it ends a verb that does not wind down, and holds up no process that does.
    timer = setTimeout(() => process.exit(ExitCode.OK), WIND_DOWN_MS).unref();
    process.exitCode = ExitCode.OK;
    closed();
  };
  // Later writes to the closed stream fail too: they are as quiet.
  process.stdout.on('error', onError);
  process.stderr.on('error', onError);
  return () => {
    if (timer) clearTimeout(timer);
  };
}
