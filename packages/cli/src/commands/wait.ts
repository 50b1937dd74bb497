import { isZoottError } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import type { CommandBody } from '../runner.js';

interface WaitFlags {
  exchange?: string;
  timeout?: string;
  peek?: boolean;
}

type WaitOptions = import('@zoott/worker').WaitForResultOptions;

/**
 * `zoott wait <routingkey>`: the next result published on a reply path (consumed unless
 * --peek), printed as JSON. The reply path must carry the world's ACL, and results with
 * another ACL are skipped with a note: nobody outside the world can plant one.
 */
export const waitCommand: CommandBody = async (ctx, cmd: Command) => {
  const [routingkey] = cmd.processedArgs as [string];
  const f = cmd.opts<WaitFlags>();
  const options: WaitOptions = {
    routingkey,
    // Only results written under this world's ACL are accepted.
    world: ctx.world,
    consume: f.peek !== true,
    signal: ctx.signal,
    onUntrusted: (path, why) => ctx.note(`skipped ${path}: ${why}`),
  };
  if (f.exchange !== undefined) options.exchange = f.exchange;
  if (f.timeout !== undefined) {
    const s = Number(f.timeout);
    if (!(s > 0))
      throw new CliError(`--timeout ${f.timeout}: must be a positive number of seconds`);
    options.timeoutMs = Math.round(s * 1000);
  }
  const { waitForResult, REPLY_PATH_CHECK } = await import('@zoott/worker');
  const c = await ctx.session().coordinator();
  try {
    const got = await waitForResult(c, options);
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
    throw err;
  }
};
