import type { Command } from 'commander';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { userWorldArgument } from '../world-argument.js';
import {
  describeRetention,
  type RetentionFlags,
  retentionJson,
  retentionPatch,
  withRetentionFlags,
} from './retention-flags.js';

/** `zoott retention <world> [flags]`: shows a world's retention settings, or changes them. */
const retentionCommand: CommandBody = async (ctx, cmd: Command) => {
  const world = await userWorldArgument(cmd);
  const patch = await retentionPatch(cmd.opts<RetentionFlags>());
  const { readRetention, updateRetention } = await import('@zoott/core');
  const coordinator = await ctx.session().coordinator();
  if (patch) await updateRetention(coordinator, world, patch);
  const { settings, stored } = await readRetention(coordinator, world);
  if (ctx.json) {
    ctx.printJson({ world, changed: patch !== null, retention: retentionJson(settings, stored) });
    return;
  }
  const text = await describeRetention(settings);
  ctx.out(
    renderTable([
      ['world', ctx.colors.bold(world)],
      ['completed', text.completed!],
      ['results', text.results!],
      ['failed', text.failed!],
    ]),
  );
  if (!stored) ctx.note('no settings stored for this world: these are the defaults');
  else if (patch) ctx.note('stored; the reaper of every worker of the world follows at once');
};

/** `zoott retention <world> [flags]`. */
export const retentionVerb: Verb = {
  define: (program) =>
    withRetentionFlags(
      program
        .command('retention')
        .argument('<world>', 'world name')
        .description('what a world keeps: completed records, unconsumed results, failed records'),
    ),
  examples: [
    'zoott retention files',
    'zoott retention files --completed 24h --max-completed 100000 --results 1h',
    'zoott retention files --completed forever --max-completed unlimited   # grows without bound',
  ],
  run: retentionCommand,
};
