import type { Command } from 'commander';
import { ensureChroot } from '../connection.js';
import { CliError } from '../errors.js';
import type { CommandBody } from '../runner.js';

interface InitOptions {
  buckets?: string;
}

/** `zoott init <world>`: creates the world's areas (and the connect string's chroot). */
export const initCommand: CommandBody = async (ctx, cmd: Command) => {
  const [world] = cmd.processedArgs as [string];
  // A user world may not take an internal world's name (they hold race coordinators).
  const { validateUserWorldName } = await import('@zoott/core');
  try {
    validateUserWorldName(world);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const opts = cmd.opts<InitOptions>();
  const buckets = opts.buckets === undefined ? undefined : Number(opts.buckets);
  if (buckets !== undefined && (!Number.isInteger(buckets) || buckets < 1))
    throw new CliError(`--buckets ${opts.buckets}: must be a whole number >= 1`);
  await ensureChroot(ctx.settings);
  const { createEngine } = await import('@zoott/core');
  const engine = createEngine(await ctx.session().coordinator(), {
    world,
    ...(buckets !== undefined ? { buckets } : {}),
  });
  await engine.init();
  const meta = await engine.context();
  if (ctx.json) ctx.printJson({ world, buckets: meta.layout.buckets, root: meta.layout.root });
  else ctx.out(`world ${world} ready (${meta.layout.root}, ${meta.layout.buckets} buckets)`);
};
