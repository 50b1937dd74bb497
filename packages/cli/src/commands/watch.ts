import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { formatTaskError } from '../output/format.js';
import { formatProgressValue, LogCursor } from '../output/progress-report.js';
import { keepSession } from '../ride-out.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';

interface WatchOptions {
  count?: string;
  timeout?: string;
  progress?: boolean;
}

/**
 * `zoott watch`: the live event stream (queued, started, completed, failed, retried,
 * cancelled, removed), one line per event, a failure's and a retry's with its reason;
 * JSON lines with --json. With --progress, also what
 * running tasks report: a line when a task's progress value changes, one per new log line.
 * Ends on Ctrl-C, after --count
 * events, or after --timeout seconds (exit 0: a timeout is how a script bounds a watch).
 * A ZooKeeper outage is ridden out (notes on stderr), not an end.
 */
const watchCommand: CommandBody = async (ctx, cmd: Command) => {
  const opts = cmd.opts<WatchOptions>();
  const count = opts.count === undefined ? Number.POSITIVE_INFINITY : Number(opts.count);
  if (!(count >= 1)) throw new CliError(`--count ${opts.count}: must be a number >= 1`);
  const engine = await ctx.session().engine();
  await engine.context(); // an uninitialised world fails here, not inside the stream
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  if (opts.timeout !== undefined) {
    const seconds = Number(opts.timeout);
    if (!(seconds > 0))
      throw new CliError(`--timeout ${opts.timeout}: must be a positive number of seconds`);
    timer = setTimeout(() => stop.abort(), seconds * 1000);
  }
  const coordinator = engine.coordinator;
  // An outage does not end the watch: the session is renewed when lost, and the stream
  // lists every bucket again once connected, so changes made meanwhile still come out.
  const offSession = keepSession(coordinator, stop.signal, (t) => ctx.note(t));
  const colours = ctx.colors;
  const paint: Record<string, (text: string) => string> = {
    queued: colours.dim,
    started: colours.yellow,
    completed: colours.green,
    failed: colours.red,
    retried: colours.magenta,
    cancelled: colours.dim,
    removed: colours.dim,
  };
  let seen = 0;
  const cursor = new LogCursor();
  try {
    for await (const event of engine.events({
      signal: stop.signal,
      progress: opts.progress === true,
      // On stderr even with --json, once the stream is live: scripts (and tests) can wait for
      // this line, and every change after it is reported.
      onReady: () => ctx.note(`watching world ${engine.world} (Ctrl-C to stop)`),
    })) {
      const at = new Date().toISOString();
      const key = event.key.join('|');
      if (event.type === 'progress' && event.progress) {
        const { lines, missed, valueChanged } = cursor.next(key, event.progress);
        if (ctx.json) {
          const line = {
            at,
            type: event.type,
            key,
            world: event.world,
            attempt: event.progress.attempt,
          };
          const report = {
            ...line,
            ...(event.progress.progress !== undefined ? { progress: event.progress.progress } : {}),
            log: lines.map((l) => l.line),
            ...(missed > 0 ? { missedLines: missed } : {}),
          };
          process.stdout.write(`${JSON.stringify(report)}\n`);
        } else {
          if (valueChanged)
            ctx.out(
              `${colours.dim(at)} ${colours.cyan('progress'.padEnd(9))} ${key} ${formatProgressValue(event.progress.progress)}`,
            );
          if (missed > 0)
            ctx.out(
              `${colours.dim(at)} ${colours.dim('log'.padEnd(9))} ${key} (${missed} lines not shown)`,
            );
          for (const line of lines)
            ctx.out(`${colours.dim(at)} ${colours.dim('log'.padEnd(9))} ${key} ${line.line}`);
        }
        if (++seen >= count) break;
        continue;
      }
      // A failure or a retry says why, as recorded.
      const error = event.error ? { error: event.error } : {};
      if (ctx.json)
        process.stdout.write(
          `${JSON.stringify({ at, type: event.type, key, world: event.world, ...error })}\n`,
        );
      else {
        const why = event.error ? ` ${colours.dim(formatTaskError(event.error))}` : '';
        ctx.out(
          `${colours.dim(at)} ${(paint[event.type] ?? String)(event.type.padEnd(9))} ${key}${why}`,
        );
      }
      if (++seen >= count) break;
    }
  } finally {
    clearTimeout(timer);
    offSession();
    ctx.signal.removeEventListener('abort', onAbort);
  }
  if (coordinator.state === 'closed' || coordinator.state === 'lost')
    throw new CliError('the ZooKeeper session ended while watching', ExitCode.UNREACHABLE);
  return ctx.signal.aborted ? ExitCode.INTERRUPTED : ExitCode.OK;
};

export const watchVerb: Verb = {
  define: (program) =>
    program
      .command('watch')
      .description('stream task events live (JSON lines with --json)')
      .option('--count <n>', 'stop after n events')
      .option('--timeout <seconds>', 'stop after this long')
      .option('--progress', "also stream running tasks' progress and log lines"),
  examples: ['zoott watch --json | jq .key', 'zoott watch --progress'],
  run: watchCommand,
};
