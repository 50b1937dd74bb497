import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { userWorldArgument } from '../world-argument.js';

interface ParkedFlags {
  retry?: boolean;
  drop?: boolean;
  all?: boolean;
}

/**
 * `zoott parked <world> [names...] [--retry | --drop] [--all]`: the results the AMQP bridge
 * could not publish (the broker refused the exchange, it does not exist, no queue was bound)
 * and parked, with why and where they were to go. `--retry` puts the named ones (or `--all`)
 * back into the bridge's reply directory, where a bridge publishes them again; `--drop`
 * removes them for good. A name that is not parked is exit 5, and nothing is changed.
 */
const parkedCommand: CommandBody = async (ctx, cmd: Command) => {
  const world = await userWorldArgument(cmd);
  const names = (cmd.processedArgs as [string, string[] | undefined])[1] ?? [];
  const flags = cmd.opts<ParkedFlags>();
  if (flags.retry && flags.drop) throw new CliError('--retry and --drop: choose one');
  const acting = flags.retry === true || flags.drop === true;
  if (!acting && (names.length > 0 || flags.all))
    throw new CliError(
      'names and --all go with --retry or --drop',
      ExitCode.USAGE,
      'e.g. zoott parked jobs --all --retry',
    );
  if (acting && names.length === 0 && !flags.all)
    throw new CliError(
      'name the parked results, or pass --all',
      ExitCode.USAGE,
      'e.g. zoott parked jobs result-0000000042 --retry',
    );
  if (acting && names.length > 0 && flags.all) throw new CliError('names or --all, not both');
  const { dropParked, readParkedArea, retryParked } = await import('@zoott/jobs');
  const coordinator = await ctx.session().coordinator();
  const { parked, unread } = await readParkedArea(coordinator, world);
  // Nodes there that are not parked results are never retried or dropped here: named, so a
  // planted or damaged node is not passed over in silence.
  const unreadNote = () => {
    for (const node of unread)
      ctx.note(`${node.path}: ${node.why}, left alone (\`zoott doctor ${world}\` reports it)`);
  };
  if (!acting) {
    if (ctx.json) {
      ctx.printJson({
        world,
        unread: unread.map(({ name, path, why }) => ({ name, path, why })),
        parked: parked.map(
          ({
            name,
            path,
            exchange,
            routingkey,
            reason,
            attempts,
            firstFailedAt,
            parkedAt,
            from,
            result,
          }) => ({
            name,
            path,
            exchange,
            routingkey,
            reason,
            attempts,
            firstFailedAt,
            parkedAt,
            from,
            result,
          }),
        ),
      });
    } else if (parked.length === 0) {
      ctx.out(`world ${world}: no parked results`);
      unreadNote();
    } else {
      const cc = ctx.colors;
      ctx.out(
        renderTable(
          parked.map((result) => [
            result.name,
            result.parkedAt,
            result.exchange === '' ? '""' : result.exchange,
            result.routingkey,
            String(result.attempts),
            result.reason,
          ]),
          ['NAME', 'PARKED', 'EXCHANGE', 'ROUTING KEY', 'TRIES', 'REASON'].map((h) => cc.dim(h)),
        ),
      );
      ctx.out(
        `world ${world}: ${parked.length} parked result(s); \`zoott parked ${world} <name> --retry\` or \`--drop\``,
      );
      unreadNote();
    }
    return ExitCode.OK;
  }
  const known = new Set(parked.map((p) => p.name));
  const missing = names.filter((n) => !known.has(n));
  const whyNot = new Map(unread.map((node) => [node.name, node.why]));
  if (missing.length > 0)
    throw new CliError(
      `not parked in world ${world}: ${missing.map((name) => (whyNot.has(name) ? `${name} (${whyNot.get(name)})` : name)).join(', ')}`,
      ExitCode.NOT_FOUND,
      `\`zoott parked ${world}\` lists what is`,
    );
  const chosen = flags.all ? parked.map((p) => p.name) : names;
  const done: string[] = [];
  for (const name of chosen) {
    if (flags.retry) await retryParked(coordinator, world, name);
    else await dropParked(coordinator, world, name);
    done.push(name);
  }
  if (flags.all) unreadNote();
  const key = flags.retry ? 'retried' : 'dropped';
  if (ctx.json) ctx.printJson({ world, [key]: done });
  else if (done.length === 0) ctx.note('no parked results');
  else ctx.out(done.map((n) => `${flags.retry ? 'retrying' : 'dropped'} ${n}`).join('\n'));
  return ExitCode.OK;
};

export const parkedVerb: Verb = {
  define: (program) =>
    program
      .command('parked')
      .argument('<world>', 'world name')
      .argument('[names...]', 'parked results, as listed')
      .description('results the AMQP bridge could not publish: list, retry or drop them')
      .option('--retry', 'put them back for the bridges to publish again')
      .option('--drop', 'remove them for good')
      .option('--all', 'every parked result of the world'),
  examples: [
    'zoott parked files',
    'zoott parked files result-0000000042 --retry',
    'zoott parked files --all --drop --json',
  ],
  run: parkedCommand,
};
