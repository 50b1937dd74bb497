import { isZoottError } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { keepSession, throughOutages, withDeadline } from '../ride-out.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { waitForTaskCommand } from './wait-task.js';

interface WaitFlags {
  exchange?: string;
  timeout?: string;
  peek?: boolean;
  any?: boolean;
  task?: string;
}

type WaitOptions = import('@zoott/jobs').WaitForResultOptions;

/**
 * `zoott wait --task <task>`: see `wait-task.ts`.
 *
 * `zoott wait <routingkey>`: the next result published on a reply path after `wait` began
 * (with --any, also one already there), consumed unless --peek, printed as JSON. Rides out a
 * ZooKeeper outage shorter than --timeout. The reply path must carry the world's ACL, and
 * results with another ACL are skipped with a note: nobody outside the world can plant one.
 */
const waitCommand: CommandBody = async (ctx, cmd: Command) => {
  const [routingkey] = cmd.processedArgs as [string | undefined];
  const flags = cmd.opts<WaitFlags>();
  let timeoutMs = Number.POSITIVE_INFINITY;
  if (flags.timeout !== undefined) {
    const seconds = Number(flags.timeout);
    if (!(seconds > 0))
      throw new CliError(`--timeout ${flags.timeout}: must be a positive number of seconds`);
    timeoutMs = Math.round(seconds * 1000);
  }
  if (flags.task !== undefined) {
    // One task's end, not a reply path: the reply path's flags have no meaning here.
    const given = [
      routingkey !== undefined ? `<routingkey> ${routingkey}` : '',
      flags.exchange !== undefined ? '--exchange' : '',
      flags.peek ? '--peek' : '',
      flags.any ? '--any' : '',
    ].filter(Boolean);
    if (given.length > 0)
      throw new CliError(
        `--task waits for a task, not a reply path: drop ${given.join(', ')}`,
        ExitCode.USAGE,
        'zoott wait --task a|b|c, or zoott wait <routingkey> for a reply path',
      );
    return waitForTaskCommand(ctx, flags.task, timeoutMs, flags.timeout);
  }
  if (routingkey === undefined)
    throw new CliError(
      'wait needs a <routingkey> (a reply path) or --task <task>',
      ExitCode.USAGE,
      'zoott wait nightly-report, or zoott wait --task a|b|c',
    );
  const { replyDir, waitForResult, REPLY_PATH_CHECK } = await import('@zoott/jobs');
  const address =
    flags.exchange === undefined ? { routingkey } : { routingkey, exchange: flags.exchange };
  const dir = replyDir(address, ctx.world);
  const coordinator = await ctx.session().coordinator();
  const deadline = Date.now() + timeoutMs;
  const stop = withDeadline(ctx.signal, timeoutMs);
  const offSession = keepSession(coordinator, stop.signal, (t) => ctx.note(t));
  try {
    // What is already there was published before this wait: not ours, unless --any.
    const before = flags.any
      ? new Set<string>()
      : new Set(
          await coordinator.children(dir).catch((err: unknown) => {
            if (isZoottError(err, 'NO_NODE')) return [];
            throw err;
          }),
        );
    // On stderr even with --json: scripts (and tests) can wait for this line.
    ctx.note(
      `waiting for a result under ${dir}${Number.isFinite(timeoutMs) ? ` (up to ${flags.timeout} s)` : ''}`,
    );
    const got = await throughOutages(coordinator, stop.signal, () => {
      const options: WaitOptions = {
        ...address,
        // Only results written under this world's ACL are accepted.
        world: ctx.world,
        consume: flags.peek !== true,
        signal: ctx.signal,
        skip: (name: string) => before.has(name),
        onUntrusted: (path: string, why: string) => ctx.note(`skipped ${path}: ${why}`),
      };
      if (Number.isFinite(timeoutMs)) options.timeoutMs = Math.max(1, deadline - Date.now());
      return waitForResult(coordinator, options);
    });
    ctx.printJson(ctx.json ? { path: got.path, result: got.result } : got.result);
    return ExitCode.OK;
  } catch (err) {
    if (ctx.signal.aborted) return ExitCode.INTERRUPTED;
    // Our own refusal of an untrusted reply path, not a server's: say what it is.
    if (isZoottError(err, 'NO_AUTH') && err.op === REPLY_PATH_CHECK)
      throw new CliError(
        err.message.replace(/^NO_AUTH: /, ''),
        ExitCode.AUTH,
        "results are read only from reply paths that carry the world's ACL",
      );
    if (stop.signal.aborted)
      throw new CliError(`no result under ${dir} within ${flags.timeout} s`, ExitCode.TIMEOUT);
    throw err;
  } finally {
    offSession();
    stop.dispose();
  }
};

export const waitVerb: Verb = {
  define: (program) =>
    program
      .command('wait')
      .argument('[routingkey]', 'routing key of the reply path')
      .description(
        'wait for the next result published on a reply path after it began, or with --task for one task to end',
      )
      .option(
        '--task <task>',
        'wait for this task (a|b|c or a/b/c) to end: exit 0 completed (its result printed), 8 failed for good, 5 cancelled or no such task',
      )
      .option('--exchange <name>', 'exchange (default: the default exchange)')
      .option('--timeout <seconds>', 'give up after this long (exit 6)')
      .option('--peek', 'leave the result in place instead of consuming it')
      .option('--any', 'also take a result that was already there (the oldest)'),
  examples: [
    'zoott wait nightly-report --timeout 60',
    "zoott wait --task 'requestFile_a|downloadFile_a' --timeout 600",
  ],
  run: waitCommand,
};
