import type { Command } from 'commander';
import { worldFindings } from '../doctor-findings.js';
import { ExitCode } from '../exit-codes.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { requestedAcl } from '../world-acl.js';

interface DoctorOptions {
  repair?: boolean;
}

/**
 * `zoott doctor <world> [--repair]`: reads the whole world, its race world included, and
 * reports damage (corrupt nodes and settings, claims, registrations and election candidates
 * that are not ephemeral, orphan entries, records and progress, progress left by completed
 * tasks, tasks in no state, ACLs other than the credentials', reply paths and race state not
 * under them, leftover race worlds). `--repair` prints what it will move, then moves the
 * nodes that are safe to move into `/zoott_q/<world>` (nothing is deleted). Exit 0 when
 * nothing is left to fix, 7 when something is (the findings say what to do).
 */
const doctorCommand: CommandBody = async (ctx, cmd: Command) => {
  const [world] = cmd.processedArgs as [string];
  const opts = cmd.opts<DoctorOptions>();
  const { repairWorld, QUARANTINE_ROOT } = await import('@zoott/core/internal');
  const c = await ctx.session().coordinator();
  const findings = await worldFindings(c, world, requestedAcl(ctx.settings));
  const movable = findings.filter((f) => f.repair === 'quarantine');
  const quarantine = `${QUARANTINE_ROOT}/${world}`;
  if (opts.repair && movable.length > 0 && !ctx.json)
    ctx.out(
      [
        `moving ${movable.length} node(s) to ${quarantine}:`,
        ...movable.map((f) => `  ${f.path}  (${f.kind})`),
      ].join('\n'),
    );
  const moved = opts.repair ? await repairWorld(c, world, movable) : [];
  const movedFrom = new Set(moved.map((m) => m.from));
  const left = findings.filter((f) => !movedFrom.has(f.path));
  if (ctx.json) {
    ctx.printJson({
      world,
      healthy: findings.length === 0,
      findings,
      ...(opts.repair ? { quarantine, moved } : {}),
    });
  } else if (findings.length === 0) {
    ctx.out(`world ${world}: no problems found`);
  } else {
    const cc = ctx.colors;
    ctx.out(
      renderTable(
        findings.map((f) => [
          f.kind,
          f.path,
          movedFrom.has(f.path) ? 'moved' : f.repair === 'quarantine' ? '--repair moves it' : '-',
          f.detail,
        ]),
        ['KIND', 'PATH', 'ACTION', 'DETAIL'].map((h) => cc.dim(h)),
      ),
    );
    ctx.out(
      opts.repair
        ? `world ${world}: ${findings.length} problem(s), ${moved.length} moved to ${quarantine}, ${left.length} left`
        : `world ${world}: ${findings.length} problem(s), ${movable.length} that --repair moves to ${quarantine}`,
    );
  }
  return left.length > 0 ? ExitCode.CONFLICT : ExitCode.OK;
};

export const doctorVerb: Verb = {
  define: (program) =>
    program
      .command('doctor')
      .argument('<world>', 'world name')
      .description("a world's health: corrupt nodes, ghost claims and workers, orphans, weak ACLs")
      .option('--repair', 'move what is safe to move into /zoott_q/<world> (never deletes)'),
  examples: ['zoott --auth alice:s3cret doctor files', 'zoott doctor files --repair --json'],
  run: doctorCommand,
};
