import {
  createEngine,
  type Engine,
  listRateLimits,
  type RateLimit,
  removeRateLimit,
  setRateLimit,
} from '@zoott/core';
import { validateWorldName } from '@zoott/core/internal';
import type { Command } from 'commander';
import { cliLogger } from '../connection.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { listWorkers } from '../world-info.js';

interface LimitOptions {
  remove?: boolean;
}

/** A limit as shown: with the live workers serving the type and each one's share. */
export interface LimitView extends RateLimit {
  /** Live workers that serve the type: the limit is shared among them. */
  workers: number;
  /** Each worker's share, in starts per second (`null` while no worker serves the type). */
  perWorkerPerSecond: number | null;
}

/** The world's limits with the workers that share each one. */
export async function limitViews(
  engine: Engine,
  sink: Parameters<typeof listWorkers>[1],
): Promise<LimitView[]> {
  const limits = await listRateLimits(engine);
  if (limits.length === 0) return [];
  const workers = await listWorkers(engine, sink);
  return limits.map((limit) => {
    const serving = workers.filter((w) => w.types.includes(limit.type)).length;
    const perSecond = (limit.count / limit.perMs) * 1000;
    return {
      ...limit,
      workers: serving,
      perWorkerPerSecond: serving === 0 ? null : round(perSecond / serving),
    };
  });
}

const round = (x: number) => Math.round(x * 1000) / 1000;

function describe(view: LimitView): string {
  const shared =
    view.workers === 0
      ? 'no live worker serves it'
      : `${view.workers} worker${view.workers === 1 ? '' : 's'} share it, ${view.perWorkerPerSecond}/s each`;
  return `${view.type}: ${view.rate} (${shared})`;
}

/**
 * `zoott limit <world> [type] [rate] [--remove]`: sets (`20/s`, `100/m`, `3000/h`), shows,
 * removes or lists the cluster-wide rate limits of a world's task types.
 */
export const limitCommand: CommandBody = async (ctx, cmd: Command) => {
  const [world, type, rate] = cmd.processedArgs as [string, string | undefined, string | undefined];
  const options = cmd.opts<LimitOptions>();
  validateWorldName(world);
  if (options.remove && type === undefined)
    throw new CliError('--remove needs the task type whose limit to remove', ExitCode.USAGE);
  if (options.remove && rate !== undefined)
    throw new CliError('give a rate or --remove, not both', ExitCode.USAGE);
  const engine = createEngine(await ctx.session().coordinator(), {
    world,
    logger: cliLogger(ctx.globals.debug === true),
  });
  if (options.remove) {
    if (!(await removeRateLimit(engine, type!)))
      throw new CliError(`type ${type} has no limit in world ${world}`, ExitCode.NOT_FOUND);
    if (ctx.json) return ctx.printJson({ world, removed: type });
    ctx.out(`limit of ${type} removed in world ${world}`);
    return;
  }
  if (rate !== undefined) await setRateLimit(engine, type!, rate);
  const views = await limitViews(engine, ctx.corrupt.add);
  if (type !== undefined) {
    const view = views.find((l) => l.type === type);
    if (!view)
      throw new CliError(`type ${type} has no limit in world ${world}`, ExitCode.NOT_FOUND);
    if (ctx.json) return ctx.printJson({ world, limit: view });
    ctx.out(`${rate !== undefined ? 'limit set: ' : ''}${describe(view)}`);
    return;
  }
  if (ctx.json) return ctx.printJson({ world, limits: views, corrupt: ctx.corrupt.list() });
  if (views.length === 0) {
    ctx.note(
      `no rate limits in world ${world} (set one with \`zoott limit ${world} <type> 20/s\`)`,
    );
    return;
  }
  const colours = ctx.colors;
  ctx.out(
    renderTable(
      views.map((view) => [
        view.type,
        view.rate,
        String(view.workers),
        view.perWorkerPerSecond === null ? '-' : `${view.perWorkerPerSecond}/s`,
      ]),
      ['TYPE', 'LIMIT', 'WORKERS', 'EACH'].map((h) => colours.dim(h)),
    ),
  );
};

/** `zoott limit <world> [type] [rate] [--remove]`. */
export const limitVerb: Verb = {
  define: (program) =>
    program
      .command('limit')
      .argument('<world>', 'world whose limits to set or show')
      .argument('[type]', 'task type')
      .argument('[rate]', 'task starts across all workers: 20/s, 100/m or 3000/h')
      .description('cluster-wide rate limits per task type: set, show, remove, list')
      .option('--remove', 'remove the limit of the type'),
  examples: [
    'zoott limit files sendMail 20/s',
    'zoott limit files --json',
    'zoott limit files sendMail --remove',
  ],
  run: limitCommand,
};
