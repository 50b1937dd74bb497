import { currentScheduler, type Engine, type ListedSchedule, listSchedules } from '@zoott/core';
import type { CommandContext } from '../context.js';
import { formatTime } from '../output/format.js';
import { renderTable } from '../output/table.js';
import { type LimitView, limitViews } from './limit.js';

/** What `zoott status` shows of a world's schedules and rate limits. */
export interface ScheduleStatus {
  /** The elected scheduler (a worker id), `null` while no worker runs. */
  scheduler: string | null;
  schedules: ListedSchedule[];
  limits: LimitView[];
}

/** Reads the schedules, the scheduler and the limits of the engine's world. */
export async function scheduleStatus(
  engine: Engine,
  sink: Parameters<typeof limitViews>[1],
): Promise<ScheduleStatus> {
  const [scheduler, schedules, limits] = await Promise.all([
    currentScheduler(engine),
    listSchedules(engine),
    limitViews(engine, sink),
  ]);
  return { scheduler, schedules, limits };
}

/** The human form: a schedules table and a limits table, each only when there are any. */
export function printScheduleStatus(ctx: CommandContext, status: ScheduleStatus): void {
  const colours = ctx.colors;
  if (status.schedules.length > 0) {
    printTable(
      ctx,
      status.schedules.map((schedule) => [
        schedule.name,
        schedule.cron,
        schedule.tz ?? 'UTC',
        schedule.type,
        schedule.nextTick === null ? '-' : formatTime(schedule.nextTick),
      ]),
      ['SCHEDULE', 'CRON', 'TZ', 'TYPE', 'NEXT TICK'],
    );
    ctx.out(
      `scheduler: ${status.scheduler ?? colours.red('none (no worker runs: no tick is queued)')}`,
    );
  }
  if (status.limits.length > 0) {
    printTable(
      ctx,
      status.limits.map((limit) => [
        limit.type,
        limit.rate,
        String(limit.workers),
        limit.perWorkerPerSecond === null ? '-' : `${limit.perWorkerPerSecond}/s`,
      ]),
      ['LIMITED TYPE', 'LIMIT', 'WORKERS', 'EACH'],
    );
  }
}

/** A blank line, then `rows` under the dimmed `headers`: one table after the status above. */
function printTable(ctx: CommandContext, rows: string[][], headers: string[]): void {
  ctx.out('');
  ctx.out(
    renderTable(
      rows,
      headers.map((h) => ctx.colors.dim(h)),
    ),
  );
}
