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

/**
 * `zoott init <world>`: creates the world: its tree root and its node in every area, with the
 * credentials' ACL; the area nodes every world shares and the connect string's chroot when
 * they are missing, with world:anyone cr. A world made by zoott 0.1.0 gets what it lacks, and
 * its results waiting where 0.1.0 kept them are moved into its reply area.
 */
const initCommand: CommandBody = async (ctx, cmd: Command) => {
  const world = await userWorldArgument(cmd);
  const opts = cmd.opts<InitOptions>();
  const buckets = opts.buckets === undefined ? undefined : Number(opts.buckets);
  if (buckets !== undefined && (!Number.isInteger(buckets) || buckets < 1))
    throw new CliError(`--buckets ${opts.buckets}: must be a whole number >= 1`);
  // Every flag is checked before anything is created: a bad one leaves no world behind.
  const retention = await retentionPatch(cmd.opts<RetentionFlags>());
  const { ensureNamespace, SHARED_ACL } = await import('@zoott/core/internal');
  // A chroot made here is shared by the worlds of everyone who may write it: nobody may lock
  // it, the credentials that made it included.
  await ensureChroot(ctx.settings, SHARED_ACL);
  const coordinator = await ctx.session().coordinator();
  const { createEngine } = await import('@zoott/core');
  const engine = createEngine(coordinator, {
    world,
    ...(buckets !== undefined ? { buckets } : {}),
  });
  // The area nodes every world shares: made, or given the shared ACL when these credentials
  // may (zoott 0.1.0 made them with whoever came first's); said before the world is made.
  const namespace = await ensureNamespace(coordinator);
  await engine.init();
  // With credentials the world must be theirs. An existing world someone made open (or with
  // another ACL) stays readable and writable by others, so "ready" would be a lie: say so.
  const acl = await requestedAcl(ctx.settings, () => ctx.session().coordinator());
  if (acl) {
    const { worldAclMismatches } = await import('@zoott/core/admin');
    const wrong = await worldAclMismatches(coordinator, world, acl);
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
  // Results zoott 0.1.0 workers published where every world shared them: into the world's
  // own reply area, where this release reads them.
  const { moveLegacyReplies, replyRoot } = await import('@zoott/jobs/internal');
  const legacy = await moveLegacyReplies(coordinator, world);
  const { readRetention, updateRetention } = await import('@zoott/core');
  if (retention) await updateRetention(coordinator, world, retention);
  const kept = (await readRetention(coordinator, world)).settings;
  const meta = await engine.context();
  if (ctx.json)
    ctx.printJson({
      world,
      buckets: meta.layout.buckets,
      root: meta.layout.root,
      retention: kept,
      namespace,
      legacyReplies: legacy,
    });
  else {
    for (const opened of namespace.opened)
      ctx.out(
        `${opened.path}: shared by every world of the namespace, given world:anyone cr (was ${showAcl(opened.before)})`,
      );
    for (const keptNode of namespace.kept)
      ctx.note(
        `${keptNode.path}: shared by every world of the namespace, but has ${keptNode.acl === 'unreadable' ? 'an ACL these credentials may not read' : showAcl(keptNode.acl)}, which these credentials may not change: \`zoott doctor ${world}\` says what its admins must run`,
      );
    if (legacy.moved.length > 0)
      ctx.out(
        `moved ${legacy.moved.length} result(s) of zoott 0.1.0 into ${replyRoot(world)} (${legacy.removed.length} old reply director${legacy.removed.length === 1 ? 'y' : 'ies'} removed)`,
      );
    for (const left of legacy.left) ctx.note(`not moved: ${left.path}: ${left.why}`);
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
