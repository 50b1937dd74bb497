import { lockDownWorld } from '@zoott/core/admin';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { createProgress } from '../output/progress.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { requestedAcl, showAcl, worldExtent } from '../world-acl.js';

/**
 * `zoott lock-down <world>`: gives every node of a world (tree, its node in every area with
 * everything below it: buckets, entries, records, claims, registrations, progress, schedules,
 * limits, elections, reply paths and race state; and its race world) the ACL of the credentials, and reports what it changed. Only nodes whose ACL differs
 * are written, children before parents and the world's top nodes last, so a run that is
 * interrupted leaves the world reported as not locked, and running it again finishes it.
 */
const lockDownCommand: CommandBody = async (ctx, cmd: Command) => {
  const [world] = cmd.processedArgs as [string];
  const acl = await requestedAcl(ctx.settings, () => ctx.session().coordinator());
  if (!acl)
    throw new CliError(
      'lock-down needs credentials or an ACL: the world is locked to them',
      ExitCode.USAGE,
      'pass --auth user:password (or ZOOTT_AUTH), a SASL login (--zk-sasl-file, ZOOTT_ZK_SASL), or --acl (x509:<certificate subject>:cdrwa, sasl:<user>:cdrwa)',
    );
  const coordinator = await ctx.session().coordinator();
  const { createEngine } = await import('@zoott/core');
  const { worldRoot } = await import('@zoott/core/internal');
  // A clear "not initialised" for a missing world, before anything is written.
  await createEngine(coordinator, { world }).context();
  const extent = await worldExtent(coordinator, world);
  const progress = createProgress({ label: 'locking', silent: ctx.json });
  let checked = 0;
  let changed = 0;
  const onProgress = (done: number, total: number) =>
    progress.update(checked + done, undefined, `${changed + total} changed`);
  const reports = [];
  // The race world first: the world's own tops, the last thing written, say "locked".
  if (extent.raceWorld) {
    const report = await lockDownWorld(coordinator, extent.raceWorld, acl, { onProgress });
    checked += report.checked;
    changed += report.changed.length;
    reports.push(report);
  }
  const main = await lockDownWorld(coordinator, world, acl, { onProgress });
  checked += main.checked;
  changed += main.changed.length;
  reports.push(main);
  progress.finish(`${changed} changed`);
  const all = reports.flatMap((r) => r.changed);
  if (ctx.json) {
    ctx.printJson({
      world,
      root: worldRoot(world),
      acl,
      raceWorld: extent.raceWorld,
      checked,
      changed: all.map((ch) => ({ path: ch.path, before: ch.before })),
    });
    return;
  }
  const shown = all.slice(0, 20).map((ch) => `  ${ch.path}  (was ${showAcl(ch.before)})`);
  ctx.out(
    [
      `world ${world} locked to ${showAcl(acl)}: ${checked} nodes checked, ${all.length} changed`,
      ...shown,
      ...(all.length > shown.length
        ? [`  ... and ${all.length - shown.length} more (--json lists all)`]
        : []),
    ].join('\n'),
  );
};

export const lockDownVerb: Verb = {
  define: (program) =>
    program
      .command('lock-down')
      .argument('<world>', 'world name')
      .description(
        'give every node of a world (and its reply paths) the ACL of --acl, else of the credentials (--auth, a SASL login)',
      ),
  examples: [
    'zoott --auth alice:s3cret lock-down files',
    "zoott --zk-tls-cert ops.pem --zk-tls-key ops.key --acl 'x509:CN=ops,O=example:cdrwa' lock-down files",
  ],
  run: lockDownCommand,
};
