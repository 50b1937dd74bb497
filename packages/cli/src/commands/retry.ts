import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import type { CommandBody } from '../runner.js';
import { parseTaskRef, showKey } from '../task-ref.js';
import type { Verb } from '../verb.js';

interface RetryOptions {
  allFailed?: boolean;
}

/** `zoott retry <task>` / `zoott retry --all-failed`: gives dead-lettered tasks new attempts. */
const retryCommand: CommandBody = async (ctx, cmd: Command) => {
  const [ref] = cmd.processedArgs as [string | undefined];
  const opts = cmd.opts<RetryOptions>();
  if ((ref === undefined) === !opts.allFailed)
    throw new CliError(
      'name one task, or pass --all-failed',
      ExitCode.USAGE,
      'e.g. zoott retry "a|b" or zoott retry --all-failed',
    );
  const engine = await ctx.session().engine();
  const keys = opts.allFailed
    ? (await engine.list('failed')).map((t) => t.key)
    : [parseTaskRef(ref!)];
  for (const key of keys) await engine.retry(key);
  const shown = keys.map(showKey);
  if (ctx.json) ctx.printJson({ retried: shown });
  else if (shown.length === 0) ctx.note('no failed tasks to retry');
  else ctx.out(shown.map((k) => `retrying ${k}`).join('\n'));
};

export const retryVerb: Verb = {
  define: (program) =>
    program
      .command('retry')
      .argument('[task]', 'a failed task')
      .description('retry a dead-lettered task, or all of them')
      .option('--all-failed', 'retry every failed task of the world'),
  examples: ['zoott retry "requestFile_a|downloadFile_a"', 'zoott retry --all-failed'],
  run: retryCommand,
};
