import { setTimeout as sleep } from 'node:timers/promises';
import type { AreaCounts, Engine } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { formatDuration } from '../output/format.js';
import { createProgress } from '../output/progress.js';
import type { CommandBody } from '../runner.js';

interface DrainOptions {
  timeout?: string;
  interval?: string;
}

/**
 * Polls the counts until nothing is pending or working. Counting is 4 x buckets stat reads,
 * cheap enough to poll; `onCounts` sees every reading. Resolves with the last counts, or
 * `null` when the signal aborted first.
 */
export async function waitUntilDrained(
  engine: Engine,
  options: { intervalMs: number; signal: AbortSignal; onCounts?: (c: AreaCounts) => void },
): Promise<AreaCounts | null> {
  for (;;) {
    const counts = await engine.counts();
    options.onCounts?.(counts);
    if (counts.pending === 0 && counts.working === 0) return counts;
    try {
      await sleep(options.intervalMs, undefined, { signal: options.signal });
    } catch {
      return null;
    }
  }
}

/**
 * `zoott drain`: waits until a world has nothing pending or working, with a progress bar
 * of settled (completed + failed) over all tasks. Exit 0 when drained, 8 when some tasks
 * ended failed, 6 on --timeout.
 */
export const drainCommand: CommandBody = async (ctx, cmd: Command) => {
  const opts = cmd.opts<DrainOptions>();
  const intervalMs = Math.round(Number(opts.interval ?? '0.5') * 1000);
  if (!(intervalMs > 0))
    throw new CliError(`--interval ${opts.interval}: must be a positive number of seconds`);
  const engine = await ctx.session().engine();
  const stop = new AbortController();
  const relay = () => stop.abort();
  ctx.signal.addEventListener('abort', relay, { once: true });
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  if (opts.timeout !== undefined) {
    const s = Number(opts.timeout);
    if (!(s > 0))
      throw new CliError(`--timeout ${opts.timeout}: must be a positive number of seconds`);
    timer = setTimeout(() => {
      timedOut = true;
      stop.abort();
    }, s * 1000);
  }
  const started = Date.now();
  const progress = createProgress({ label: `draining ${engine.world}` });
  let last: AreaCounts | null = null;
  try {
    const end = await waitUntilDrained(engine, {
      intervalMs,
      signal: stop.signal,
      onCounts: (c) => {
        last = c;
        const total = c.pending + c.working + c.completed + c.failed;
        progress.update(
          c.completed + c.failed,
          total,
          `(${c.working} working, ${c.failed} failed)`,
        );
      },
    });
    progress.finish();
    const counts = end ?? last ?? { pending: 0, working: 0, completed: 0, failed: 0 };
    const result = {
      world: engine.world,
      drained: end !== null,
      ...counts,
      waitedMs: Date.now() - started,
    };
    if (ctx.json) ctx.printJson(result);
    else if (end)
      ctx.out(
        `world ${engine.world} drained in ${formatDuration(result.waitedMs)}: ${counts.completed} completed, ${counts.failed} failed`,
      );
    if (timedOut) {
      if (!ctx.json)
        ctx.note(
          `still ${counts.pending} pending and ${counts.working} working after --timeout ${opts.timeout} s`,
        );
      return ExitCode.TIMEOUT;
    }
    if (!end) return ExitCode.INTERRUPTED;
    return counts.failed > 0 ? ExitCode.TASKS_FAILED : ExitCode.OK;
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', relay);
  }
};
