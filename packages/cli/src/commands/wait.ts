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
 * --peek), printed as JSON.
 */
export const waitCommand: CommandBody = async (ctx, cmd: Command) => {
  const [routingkey] = cmd.processedArgs as [string];
  const f = cmd.opts<WaitFlags>();
  const options: WaitOptions = { routingkey, consume: f.peek !== true, signal: ctx.signal };
  if (f.exchange !== undefined) options.exchange = f.exchange;
  if (f.timeout !== undefined) {
    const s = Number(f.timeout);
    if (!(s > 0))
      throw new CliError(`--timeout ${f.timeout}: must be a positive number of seconds`);
    options.timeoutMs = Math.round(s * 1000);
  }
  const { waitForResult } = await import('@zoott/worker');
  const c = await ctx.session().coordinator();
  try {
    const got = await waitForResult(c, options);
    ctx.printJson(ctx.json ? { path: got.path, result: got.result } : got.result);
    return ExitCode.OK;
  } catch (err) {
    if (ctx.signal.aborted) return ExitCode.INTERRUPTED;
    throw err;
  }
};
