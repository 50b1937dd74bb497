import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { createProgress } from '../output/progress.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { userWorldArgument } from '../world-argument.js';

interface CleanFlags {
  completed?: boolean;
  failed?: boolean;
  results?: boolean;
  olderThan?: string;
  dryRun?: boolean;
}

/** One area's outcome in `zoott clean`. */
interface AreaOutcome {
  matched: number;
  removed: number;
  treeNodes?: number;
  skipped?: number;
}

/**
 * `zoott clean <world> --completed|--failed|--results [--older-than 1h] [--dry-run]`:
 * removes old records by hand, with the reaper's guards, showing progress on stderr.
 */
const cleanCommand: CommandBody = async (ctx, cmd: Command) => {
  const world = await userWorldArgument(cmd);
  const flags = cmd.opts<CleanFlags>();
  const core = await import('@zoott/core/internal');
  if (!flags.completed && !flags.failed && !flags.results)
    throw new CliError('say what to clean: --completed, --failed and/or --results');
  let olderThanMs: number | undefined;
  if (flags.olderThan !== undefined) {
    try {
      olderThanMs = core.parseDuration(flags.olderThan, '--older-than') ?? undefined;
    } catch (err) {
      throw new CliError((err as Error).message);
    }
    if (olderThanMs === undefined)
      throw new CliError('--older-than forever matches nothing: give a duration such as 1h');
  }
  const coordinator = await ctx.session().coordinator();
  const engine = core.createEngine(coordinator, { world });
  const ectx = await engine.context();
  const dryRun = flags.dryRun === true;
  const verb = dryRun ? 'would remove' : 'removed';
  const out: Record<string, AreaOutcome> = {};
  // Two bars per area: the scan (buckets or directories read), then the removal.
  const run = async (
    area: string,
    work: (hooks: {
      onScan: (done: number, total: number) => void;
      onProgress: (done: number, total: number) => void;
    }) => Promise<AreaOutcome>,
  ) => {
    const scan = createProgress({ label: `scanning ${area}` });
    let bar: ReturnType<typeof createProgress> | null = null;
    const result = await work({
      onScan: (d, t) => scan.update(d, t),
      onProgress: (done, total) => {
        if (!bar) {
          scan.finish();
          bar = createProgress({
            label: `${dryRun ? 'matching' : 'removing'} ${area}`,
            total: total,
          });
        }
        bar.update(done, total);
      },
    });
    (bar ?? scan).finish();
    out[area] = result;
    if (!ctx.json)
      ctx.out(
        `${area}: ${verb} ${dryRun ? result.matched : result.removed} of ${result.matched} matching${
          result.skipped ? ` (${result.skipped} changed meanwhile, left in place)` : ''
        }`,
      );
  };
  const options = {
    ...(olderThanMs !== undefined ? { olderThanMs } : {}),
    dryRun,
    signal: ctx.signal,
  };
  if (flags.completed)
    await run('completed', (hooks) => core.cleanCompleted(ectx, { ...options, ...hooks }));
  if (flags.failed)
    await run('failed', (hooks) => core.cleanFailed(ectx, { ...options, ...hooks }));
  if (flags.results) {
    const { cleanResults } = await import('@zoott/jobs');
    await run('results', (hooks) => cleanResults(coordinator, world, { ...options, ...hooks }));
  }
  if (ctx.json) ctx.printJson({ world, dryRun, olderThanMs: olderThanMs ?? null, ...out });
};

/** `zoott clean <world> --completed|--failed|--results`. */
export const cleanVerb: Verb = {
  define: (program) =>
    program
      .command('clean')
      .argument('<world>', 'world name')
      .description('remove old completed records, failed tasks or unconsumed reply results now')
      .option('--completed', 'completed records (and the tree nodes of completed leaves)')
      .option('--failed', 'failed tasks, as `cancel` removes them (their descendants may then run)')
      .option('--results', 'reply results nobody consumed, in reply directories the world made')
      .option(
        '--older-than <duration>',
        'only records at least this old (30m, 1h, 7d); default all',
      )
      .option('--dry-run', 'count what would go, remove nothing'),
  examples: [
    'zoott clean files --completed --older-than 1h',
    'zoott clean files --failed --results --older-than 7d --dry-run --json',
  ],
  run: cleanCommand,
};
