import type { DiagnosisProgress, Finding, NotMoved, RepairOutcome } from '@zoott/core/admin';
import type { LegacyMove } from '@zoott/jobs/internal';
import type { Command } from 'commander';
import { worldFindings } from '../doctor-findings.js';
import { chrootOf } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { createProgress, type Progress } from '../output/progress.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { requestedAcl } from '../world-acl.js';

interface DoctorOptions {
  repair?: boolean;
  progress?: boolean;
}

/** Why a node --repair did not move is no longer a problem: read again, it was not. */
const RESOLVED = new Set<string>(['gone', 'no longer damaged']);

/**
 * `zoott doctor <world> [--repair] [--progress]`: reads the whole world, its race world
 * included, and reports damage (corrupt nodes and settings, claims, registrations and
 * election candidates that are not ephemeral, orphan entries, records and progress, progress
 * left by completed tasks, tasks in no state, ACLs other than the credentials', reply paths
 * and race state not under them, nodes someone else made or locked (squatted: with the
 * zkCli.sh command only an administrator can run), shared area nodes others may change,
 * missing nodes, leftover race worlds, results zoott 0.1.0 kept). `--repair` prints what it
 * will move, then moves the nodes that are safe to move into `/zoott_q/<world>` (nothing is
 * deleted; the bytes are kept exactly), each only if its finding, made again just before,
 * still holds, and goes on past a node it cannot move (reported with the error); it moves the
 * world's results zoott 0.1.0 left into its reply area. Progress (nodes read, parts done;
 * then nodes moved) goes to stderr on a terminal, or anywhere with --progress. Exit 0 when
 * nothing is left to fix, 7 when something is (the findings say what to do).
 */
const doctorCommand: CommandBody = async (ctx, cmd: Command) => {
  const [world] = cmd.processedArgs as [string];
  const opts = cmd.opts<DoctorOptions>();
  const { repairWorld, QUARANTINE_ROOT } = await import('@zoott/core/admin');
  const coordinator = await ctx.session().coordinator();
  // The human form on a terminal shows it; piped or --json, only when asked (stderr still).
  const silent = !(opts.progress || (process.stderr.isTTY === true && !ctx.json));
  // One bar per world read (the world, then its race world), each finished before the next.
  const bar: { world?: string; progress?: Progress } = {};
  const onProgress = (progressWorld: string, progress: DiagnosisProgress) => {
    if (!bar.progress || bar.world !== progressWorld) {
      bar.progress?.finish();
      bar.world = progressWorld;
      bar.progress = createProgress({ label: `checking ${progressWorld}`, silent });
    }
    bar.progress.update(
      progress.nodes,
      undefined,
      `nodes read, ${progress.partsDone}/${progress.parts} parts done${progress.part === 'done' ? '' : ` (${progress.part})`}`,
    );
  };
  const chroot = chrootOf(ctx.settings.connect ?? undefined);
  const findings = await worldFindings(
    coordinator,
    world,
    await requestedAcl(ctx.settings, async () => coordinator),
    onProgress,
    chroot,
  );
  bar.progress?.finish();
  const movable = findings.filter((f) => f.repair === 'quarantine');
  const migrating = findings.filter((f) => f.repair === 'migrate');
  const quarantine = `${QUARANTINE_ROOT}/${world}`;
  if (opts.repair && movable.length > 0 && !ctx.json)
    ctx.out(
      [
        `moving ${movable.length} node(s) to ${quarantine}:`,
        ...movable.map((f) => `  ${f.path}  (${f.kind})`),
      ].join('\n'),
    );
  let repair: RepairOutcome = { moved: [], notMoved: [] };
  if (opts.repair && movable.length > 0) {
    const moving = createProgress({ label: 'moving', total: movable.length, silent });
    repair = await repairWorld(coordinator, world, movable, {
      onProgress: (d, t) => moving.update(d, t),
    });
    moving.finish();
  }
  // zoott 0.1.0's reply directories of this world: their results into its reply area.
  let migrated: LegacyMove | null = null;
  if (opts.repair && migrating.length > 0) {
    const { moveLegacyReplies } = await import('@zoott/jobs/internal');
    migrated = await moveLegacyReplies(coordinator, world);
  }
  const { moved, notMoved } = repair;
  const movedFrom = new Set([...moved.map((m) => m.from), ...(migrated?.removed ?? [])]);
  const kept = new Map(notMoved.map((n) => [n.path, n.why]));
  const left = findings.filter(
    (f) => !movedFrom.has(f.path) && !RESOLVED.has(kept.get(f.path) ?? ''),
  );
  const admin = findings.filter((f) => f.repair === 'admin' && f.admin);
  if (ctx.json) {
    ctx.printJson({
      world,
      healthy: findings.length === 0,
      findings,
      left: left.length,
      ...(opts.repair ? { quarantine, moved, notMoved, migrated } : {}),
    });
  } else if (findings.length === 0) {
    ctx.out(`world ${world}: no problems found`);
  } else {
    printReport(ctx, findings, { movedFrom, kept, notMoved });
    if (admin.length > 0)
      ctx.out(
        [
          `${admin.length} node(s) these credentials cannot fix; an administrator must run:`,
          ...admin.map((f) => `  ${f.admin}`),
        ].join('\n'),
      );
    ctx.out(
      opts.repair
        ? `world ${world}: ${findings.length} problem(s), ${moved.length} moved to ${quarantine}${migrated ? `, ${migrated.moved.length} result(s) of zoott 0.1.0 moved into its reply area` : ''}, ${left.length} left${
            notMoved.length > 0 ? ` (${notMoved.length} not moved: ${notMovedWhy(notMoved)})` : ''
          }`
        : `world ${world}: ${findings.length} problem(s), ${movable.length} that --repair moves to ${quarantine}${migrating.length > 0 ? `, ${migrating.length} it moves into the reply area` : ''} (on a busy world, a task that changed while doctor read it may show once: look again)`,
    );
  }
  return left.length > 0 ? ExitCode.CONFLICT : ExitCode.OK;
};

/** Why nodes were not moved, in one phrase per reason. */
function notMovedWhy(notMoved: readonly NotMoved[]): string {
  const failed = notMoved.filter((n) => n.why === 'failed').length;
  const rest = notMoved.length - failed;
  return [
    ...(rest > 0
      ? [`${rest} read again just before the move were gone, no longer damaged or changing`]
      : []),
    ...(failed > 0 ? [`${failed} could not be moved (the error is in the table)`] : []),
  ].join('; ');
}

/** The findings as a table: what each is and what became of it. */
function printReport(
  ctx: Parameters<CommandBody>[0],
  findings: readonly Finding[],
  done: { movedFrom: Set<string>; kept: Map<string, string>; notMoved: readonly NotMoved[] },
): void {
  const errors = new Map(done.notMoved.map((n) => [n.path, n.error]));
  const action = (finding: Finding) =>
    done.movedFrom.has(finding.path)
      ? 'moved'
      : done.kept.has(finding.path)
        ? `not moved: ${done.kept.get(finding.path)}${errors.get(finding.path) ? ` (${errors.get(finding.path)})` : ''}`
        : finding.repair === 'quarantine' || finding.repair === 'migrate'
          ? '--repair moves it'
          : finding.repair === 'admin'
            ? 'an administrator (below)'
            : '-';
  const cc = ctx.colors;
  ctx.out(
    renderTable(
      findings.map((f) => [f.kind, f.path, action(f), f.detail]),
      ['KIND', 'PATH', 'ACTION', 'DETAIL'].map((h) => cc.dim(h)),
    ),
  );
}

export const doctorVerb: Verb = {
  define: (program) =>
    program
      .command('doctor')
      .argument('<world>', 'world name')
      .description(
        "a world's health: corrupt nodes, ghost claims and workers, orphans, weak ACLs, nodes someone else holds",
      )
      .option('--repair', 'move what is safe to move into /zoott_q/<world> (never deletes)')
      .option('--progress', 'show progress on stderr even when it is not a terminal'),
  examples: ['zoott --auth alice:s3cret doctor files', 'zoott doctor files --repair --json'],
  run: doctorCommand,
};
