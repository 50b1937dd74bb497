import { isZoottError } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import type { CommandBody } from '../runner.js';
import { parseTaskRef, showKey } from '../task-ref.js';
import type { Verb } from '../verb.js';

interface CancelOptions {
  subtree?: boolean;
}

/**
 * `zoott cancel <task> [--subtree]`: removes a task (and its descendants) from the queue.
 * Cancel reads no task data, so it also removes a task whose nodes are corrupt: that is how
 * an operator gets rid of one (the corrupt nodes are reported, the exit code is 0).
 */
const cancelCommand: CommandBody = async (ctx, cmd: Command) => {
  const [ref] = cmd.processedArgs as [string];
  const key = parseTaskRef(ref);
  const engine = await ctx.session().engine();
  if (!(await engine.task(key)))
    throw new CliError(`no task ${showKey(key)} in world ${engine.world}`, ExitCode.NOT_FOUND);
  const subtree = cmd.opts<CancelOptions>().subtree === true;
  const removed = (
    await engine.cancel(key, { subtree }).catch((err: unknown) => {
      // A parent alone is refused: say how to cancel it with its children.
      if (!subtree && isZoottError(err) && err.code === 'TASK_STATE')
        throw new CliError(
          err.message,
          ExitCode.CONFLICT,
          `zoott cancel '${showKey(key)}' --subtree`,
        );
      throw err;
    })
  ).map(showKey);
  if (ctx.json) ctx.printJson({ cancelled: removed, corrupt: ctx.corrupt.list() });
  else
    ctx.out(
      removed.length
        ? removed.map((k) => `cancelled ${k}`).join('\n')
        : `nothing to cancel for ${showKey(key)}`,
    );
};

export const cancelVerb: Verb = {
  define: (program) =>
    program
      .command('cancel')
      .argument('<task>', 'a|b|c or a/b/c')
      .description('cancel a task')
      .option('--subtree', 'also cancel every descendant'),
  examples: ['zoott cancel requestFile_a --subtree'],
  run: cancelCommand,
};
