import { isZoottError } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { keepSession, throughOutages, withDeadline } from '../ride-out.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';

interface WaitFlags {
  exchange?: string;
  timeout?: string;
  peek?: boolean;
  any?: boolean;
}

type WaitOptions = import('@zoott/jobs').WaitForResultOptions;

/**
 * `zoott wait <routingkey>`: the next result published on a reply path after `wait` began
 * (with --any, also one already there), consumed unless --peek, printed as JSON. Rides out a
 * ZooKeeper outage shorter than --timeout. The reply path must carry the world's ACL, and
 * results with another ACL are skipped with a note: nobody outside the world can plant one.
 */
const waitCommand: CommandBody = async (ctx, cmd: Command) => {
  const [routingkey] = cmd.processedArgs as [string];
  const f = cmd.opts<WaitFlags>();
  let timeoutMs = Number.POSITIVE_INFINITY;
  if (f.timeout !== undefined) {
    const s = Number(f.timeout);
    if (!(s > 0))
      throw new CliError(`--timeout ${f.timeout}: must be a positive number of seconds`);
    timeoutMs = Math.round(s * 1000);
  }
  const { replyDir, waitForResult, REPLY_PATH_CHECK } = await import('@zoott/jobs');
  const address = f.exchange === undefined ? { routingkey } : { routingkey, exchange: f.exchange };
  const dir = replyDir(address, ctx.world);
  const c = await ctx.session().coordinator();
  const deadline = Date.now() + timeoutMs;
  const stop = withDeadline(ctx.signal, timeoutMs);
  const offSession = keepSession(c, stop.signal, (t) => ctx.note(t));
  try {
    // What is already there was published before this wait: not ours, unless --any.
    const before = f.any
      ? new Set<string>()
      : new Set(
          await c.children(dir).catch((err: unknown) => {
            if (isZoottError(err, 'NO_NODE')) return [];
            throw err;
          }),
        );
    // On stderr even with --json: scripts (and tests) can wait for this line.
    ctx.note(
      `waiting for a result under ${dir}${Number.isFinite(timeoutMs) ? ` (up to ${f.timeout} s)` : ''}`,
    );
    const got = await throughOutages(c, stop.signal, () => {
      const options: WaitOptions = {
        ...address,
        // Only results written under this world's ACL are accepted.
        world: ctx.world,
        consume: f.peek !== true,
        signal: ctx.signal,
        skip: (name: string) => before.has(name),
        onUntrusted: (path: string, why: string) => ctx.note(`skipped ${path}: ${why}`),
      };
      if (Number.isFinite(timeoutMs)) options.timeoutMs = Math.max(1, deadline - Date.now());
      return waitForResult(c, options);
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
      throw new CliError(`no result under ${dir} within ${f.timeout} s`, ExitCode.TIMEOUT);
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
      .argument('<routingkey>', 'routing key of the reply path')
      .description('wait for the next result published on a reply path after it began')
      .option('--exchange <name>', 'exchange (default: the default exchange)')
      .option('--timeout <seconds>', 'give up after this long (exit 6)')
      .option('--peek', 'leave the result in place instead of consuming it')
      .option('--any', 'also take a result that was already there (the oldest)'),
  examples: ['zoott wait nightly-report --timeout 60'],
  run: waitCommand,
};
