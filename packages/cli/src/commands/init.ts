import type { Command } from 'commander';
import { ensureChroot } from '../connection.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { requestedAcl, showAcl } from '../world-acl.js';
import { userWorldArgument } from '../world-argument.js';
import {
  describeRetention,
  type RetentionFlags,
  retentionPatch,
  withRetentionFlags,
} from './retention-flags.js';

interface InitOptions {
  buckets?: string;
}

/** `zoott init <world>`: creates the world's areas (and the connect string's chroot). */
const initCommand: CommandBody = async (ctx, cmd: Command) => {
  const world = await userWorldArgument(cmd);
  const opts = cmd.opts<InitOptions>();
  const buckets = opts.buckets === undefined ? undefined : Number(opts.buckets);
  if (buckets !== undefined && (!Number.isInteger(buckets) || buckets < 1))
    throw new CliError(`--buckets ${opts.buckets}: must be a whole number >= 1`);
  // Every flag is checked before anything is created: a bad one leaves no world behind.
  const retention = await retentionPatch(cmd.opts<RetentionFlags>());
  await ensureChroot(ctx.settings);
  const { createEngine } = await import('@zoott/core');
  const engine = createEngine(await ctx.session().coordinator(), {
    world,
    ...(buckets !== undefined ? { buckets } : {}),
  });
  await engine.init();
  // With credentials the world must be theirs. An existing world someone made open (or with
  // another ACL) stays readable and writable by others, so "ready" would be a lie: say so.
  const acl = await requestedAcl(ctx.settings, () => ctx.session().coordinator());
  if (acl) {
    const { worldAclMismatches } = await import('@zoott/core/internal');
    const wrong = await worldAclMismatches(await ctx.session().coordinator(), world, acl);
    if (wrong.length > 0)
      throw new CliError(
        `world ${world} exists but is not locked to these credentials: ${wrong.length} of its nodes have another ACL than ${showAcl(acl)} (${wrong
          .slice(0, 3)
          .map((w) => `${w.path}: ${showAcl(w.acl)}`)
          .join('; ')}${wrong.length > 3 ? '; ...' : ''})`,
        ExitCode.AUTH,
        `\`zoott --auth <user:password> lock-down ${world}\` applies the credentials' ACL to the whole world; until then anyone allowed by the ACL above can read and change it`,
      );
  }
  const { readRetention, updateRetention } = await import('@zoott/core');
  const c = await ctx.session().coordinator();
  if (retention) await updateRetention(c, world, retention);
  const kept = (await readRetention(c, world)).settings;
  const meta = await engine.context();
  if (ctx.json)
    ctx.printJson({
      world,
      buckets: meta.layout.buckets,
      root: meta.layout.root,
      retention: kept,
    });
  else {
    ctx.out(`world ${world} ready (${meta.layout.root}, ${meta.layout.buckets} buckets)`);
    const text = await describeRetention(kept);
    ctx.out(`keeps completed: ${text.completed}; results: ${text.results}`);
  }
};

export const initVerb: Verb = {
  define: (program) =>
    withRetentionFlags(
      program
        .command('init')
        .argument('<world>', 'world name')
        .description('create a world (and the chroot of the connect string)')
        .option('--buckets <n>', 'buckets per area, fixed for the world (default 64)'),
    ),
  examples: [
    'zoott --connect 127.0.0.1:2181/myapp init files',
    'zoott init files --completed 7d --max-completed 500000 --results 1h',
  ],
  run: initCommand,
};
