import { isZoottError, type WaitingState } from '@zoott/core';
import type { CommandContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { formatTaskError } from '../output/format.js';
import { keepSession, withDeadline } from '../ride-out.js';
import { parseTaskRef, showKey } from '../task-ref.js';

/**
 * `zoott wait --task <task>`: waits for one task to end, however it was queued, with one
 * watch (`engine.waitFor`). Prints the result (JSON) and exits 0 when it completed; exits 8
 * when it failed for good (its `CODE: message` on stderr), 5 when it was cancelled (or is
 * not there), 6 after `--timeout`. Rides out a ZooKeeper outage (the session is renewed).
 * With --json, one document saying how it ended.
 */
export async function waitForTaskCommand(
  ctx: CommandContext,
  ref: string,
  timeoutMs: number,
  timeoutText: string | undefined,
): Promise<ExitCodeValue> {
  const key = parseTaskRef(ref);
  const shown = showKey(key);
  const engine = await ctx.session().engine();
  const coordinator = engine.coordinator;
  const stop = withDeadline(ctx.signal, timeoutMs);
  const offSession = keepSession(coordinator, stop.signal, (t) => ctx.note(t));
  let last = '';
  // Where the task stands, on stderr as it changes: a long wait shows it is alive.
  const onState = (state: WaitingState) => {
    const text = `task ${shown}: ${state.state} (attempt ${state.attempt})`;
    if (text !== last) ctx.note(text);
    last = text;
  };
  try {
    // On stderr even with --json: scripts (and tests) can wait for this line.
    ctx.note(
      `waiting for task ${shown} in world ${engine.world}${timeoutText ? ` (up to ${timeoutText} s)` : ''}`,
    );
    const end = await engine.waitFor(key, { signal: stop.signal, onState });
    if (end.state === 'completed') {
      const { result, type, attempts } = end;
      ctx.printJson(
        ctx.json
          ? { key: shown, state: 'completed', type, attempts, result: result ?? null }
          : (result ?? null),
      );
      return ExitCode.OK;
    }
    if (end.state === 'failed') {
      if (ctx.json) {
        const { type, attempts, error } = end;
        ctx.printJson({ key: shown, state: 'failed', type, attempts, error });
      }
      ctx.note(`task ${shown} failed for good: ${formatTaskError(end.error)}`);
      return ExitCode.TASKS_FAILED;
    }
    if (ctx.json) ctx.printJson({ key: shown, state: 'cancelled' });
    ctx.note(`task ${shown} was cancelled (or removed) before it ended`);
    return ExitCode.NOT_FOUND;
  } catch (err) {
    if (ctx.signal.aborted) return ExitCode.INTERRUPTED;
    if (stop.signal.aborted)
      throw new CliError(`task ${shown} did not end within ${timeoutText} s`, ExitCode.TIMEOUT);
    if (isZoottError(err, 'NO_SUCH_TASK'))
      throw new CliError(
        `no task ${shown} in world ${engine.world}`,
        ExitCode.NOT_FOUND,
        '`zoott tree` shows the tasks there are; refer to one as a|b|c or a/b/c',
      );
    throw err;
  } finally {
    offSession();
    stop.dispose();
  }
}
