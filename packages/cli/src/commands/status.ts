import type { Command } from 'commander';
import { formatDuration } from '../output/format.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { listWorkers, pendingSummary } from '../world-info.js';
import { describePause } from './pause.js';
import { describeRetention, retentionJson } from './retention-flags.js';
import { printScheduleStatus, scheduleStatus } from './status-schedules.js';

/**
 * `zoott status`: counts per area, oldest pending age, waiting tasks per type (naming the
 * types no live worker serves: they wait for nothing), workers and their buckets.
 */
const statusCommand: CommandBody = async (ctx, _cmd: Command) => {
  const engine = await ctx.session().engine();
  const { readRetention } = await import('@zoott/core');
  const [counts, workers, pending, meta, kept, scheduling, paused] = await Promise.all([
    engine.counts(),
    listWorkers(engine, ctx.corrupt.add),
    pendingSummary(engine, ctx.corrupt.add),
    engine.context(),
    readRetention(engine.coordinator, engine.world),
    scheduleStatus(engine, ctx.corrupt.add),
    engine.pauseState(),
  ]);
  const retention = kept.settings;
  const failedCap = retention.failed.warnCount;
  const failedOverCap = failedCap !== null && counts.failed > failedCap;
  const now = Date.now();
  const ageMs = pending.oldest === null ? null : Math.max(0, now - pending.oldest);
  const served = new Set(workers.flatMap((w) => w.types));
  const unserved = Object.keys(pending.byType)
    .filter((t) => !served.has(t))
    .sort();
  if (ctx.json) {
    ctx.printJson({
      world: engine.world,
      buckets: meta.layout.buckets,
      ...counts,
      total: counts.pending + counts.working + counts.completed + counts.failed,
      oldestPendingAgeMs: ageMs,
      pendingByType: pending.byType,
      unservedTypes: unserved,
      paused,
      workers: workers.map((w) => ({ ...w, bucketCount: w.buckets.length })),
      ...scheduling,
      retention: retentionJson(retention, kept.stored),
      failedOverCap,
      corrupt: ctx.corrupt.list(),
    });
    return;
  }
  const colours = ctx.colors;
  const rows: string[][] = [
    ['world', colours.bold(engine.world)],
    ['pending', String(counts.pending)],
    ['working', colours.yellow(String(counts.working))],
    ['completed', colours.green(String(counts.completed))],
    ['failed', counts.failed > 0 ? colours.red(String(counts.failed)) : '0'],
    ['oldest pending', ageMs === null ? '-' : formatDuration(ageMs)],
    ['workers', String(workers.length)],
  ];
  if (paused.world || paused.types.length > 0)
    rows.push(['paused', colours.yellow(describePause(paused))]);
  if (unserved.length > 0)
    rows.push([
      'unserved',
      colours.red(unserved.map((t) => `${t} (${pending.byType[t]} pending)`).join(', ')),
    ]);
  const keeps = await describeRetention(retention);
  rows.push(['keeps completed', keeps.completed!], ['keeps results', keeps.results!]);
  rows.push(['keeps failed', failedOverCap ? colours.red(keeps.failed!) : keeps.failed!]);
  ctx.out(renderTable(rows));
  if (failedOverCap)
    ctx.note(
      `${counts.failed} failed records, more than the cap of ${failedCap}: they stay until retried or cancelled (zoott retry / cancel, or zoott clean ${engine.world} --failed)`,
    );
  if (unserved.length > 0)
    ctx.note(
      `no live worker serves ${unserved.length === 1 ? 'type' : 'types'} ${unserved.join(', ')}: start a zoott-worker with a handler for ${unserved.length === 1 ? 'it' : 'them'}`,
    );
  if (workers.length > 0) {
    ctx.out('');
    ctx.out(
      renderTable(
        workers.map((worker) => [
          worker.id,
          worker.host ?? '-',
          String(worker.buckets.length),
          worker.types.join(','),
          String(worker.running.length),
        ]),
        ['WORKER', 'HOST', 'BUCKETS', 'TYPES', 'RUNNING'].map((h) => colours.dim(h)),
      ),
    );
  }
  printScheduleStatus(ctx, scheduling);
};

export const statusVerb: Verb = {
  define: (program) =>
    program
      .command('status')
      .description('counts per area, workers and their buckets, oldest pending age'),
  examples: ['zoott status --json'],
  run: statusCommand,
};
