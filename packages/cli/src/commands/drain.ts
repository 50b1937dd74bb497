import { setTimeout as sleep } from 'node:timers/promises';
import type { AreaCounts, Engine } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { formatDuration } from '../output/format.js';
import { createProgress } from '../output/progress.js';
import { keepSession, throughOutages } from '../ride-out.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';

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
  options: { intervalMs: number; signal: AbortSignal; onCounts?: (counts: AreaCounts) => void },
): Promise<AreaCounts | null> {
  for (;;) {
    // Through an outage: wait for the connection (renewed by keepSession) and count again.
    const counts = await throughOutages(engine.coordinator, options.signal, () =>
      engine.counts(),
    ).catch((err: unknown) => {
      if (options.signal.aborted) return null;
      throw err;
    });
    if (!counts) return null;
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
 * of the tasks settled during this drain (with rate and ETA). Rides out a ZooKeeper outage. Exit 0 when drained, 8 when some tasks
 * ended failed, 6 on --timeout.
 */
const drainCommand: CommandBody = async (ctx, cmd: Command) => {
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
    const seconds = Number(opts.timeout);
    if (!(seconds > 0))
      throw new CliError(`--timeout ${opts.timeout}: must be a positive number of seconds`);
    timer = setTimeout(() => {
      timedOut = true;
      stop.abort();
    }, seconds * 1000);
  }
  const offSession = keepSession(engine.coordinator, stop.signal, (t) => ctx.note(t));
  await engine.context(); // an uninitialised world fails here, before the note
  // The baseline is read before the note that says the drain began: a task settled after the
  // note counts as settled during this drain, even if an outage delays the first poll.
  const before = await engine.counts();
  ctx.note(`draining world ${engine.world} (Ctrl-C to stop)`);
  const started = Date.now();
  const progress = createProgress({ label: `draining ${engine.world}` });
  let last: AreaCounts | null = null;
  // The bar counts this drain: tasks settled since it began over those still to settle, so
  // a world with a long history does not start at 99%; the rate and ETA come from the same.
  const baseline = before.completed + before.failed;
  let settledNow = 0;
  try {
    const end = await waitUntilDrained(engine, {
      intervalMs,
      signal: stop.signal,
      onCounts: (areaCounts) => {
        last = areaCounts;
        const settled = areaCounts.completed + areaCounts.failed;
        settledNow = Math.max(0, settled - baseline);
        const left = areaCounts.pending + areaCounts.working;
        const secs = (Date.now() - started) / 1000;
        const rate = secs > 0 ? settledNow / secs : 0;
        const eta = rate > 0 ? ` ETA ${formatDuration((left / rate) * 1000)}` : '';
        progress.update(
          settledNow,
          settledNow + left,
          `(${areaCounts.working} working, ${areaCounts.failed} failed, ${rate.toFixed(1)}/s${eta})`,
        );
      },
    });
    progress.finish();
    const counts = end ?? last ?? { pending: 0, working: 0, completed: 0, failed: 0 };
    const result = {
      world: engine.world,
      drained: end !== null,
      ...counts,
      settledThisDrain: settledNow,
      waitedMs: Date.now() - started,
    };
    if (ctx.json) ctx.printJson(result);
    else if (end)
      ctx.out(
        `world ${engine.world} drained in ${formatDuration(result.waitedMs)}: ${settledNow} settled meanwhile; ${counts.completed} completed, ${counts.failed} failed in all`,
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
    offSession();
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', relay);
  }
};

export const drainVerb: Verb = {
  define: (program) =>
    program
      .command('drain')
      .description('wait until nothing is pending or working, with a progress bar')
      .option('--timeout <seconds>', 'give up after this long (exit 6)')
      .option('--interval <seconds>', 'poll interval (default 0.5)'),
  examples: ['zoott drain --timeout 600'],
  run: drainCommand,
};
