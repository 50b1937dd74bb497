import {
  currentScheduler,
  type Engine,
  type ListedSchedule,
  listRateLimits,
  listSchedules,
  type RateLimit,
} from '@zoott/core';
import type { WorkerView } from './data.js';

/** A rate limit with the live workers that share it and each one's share. */
export interface LimitRow extends RateLimit {
  workers: number;
  /** Starts per second each serving worker may make; `null` while none serves the type. */
  perWorkerPerSecond: number | null;
}

/** What the Schedules page shows: the schedules, the elected scheduler, the rate limits. */
export interface ScheduleData {
  scheduler: string | null;
  schedules: ListedSchedule[];
  limits: LimitRow[];
}

/** Reads a world's schedules and limits; `workers` (the registry) gives each limit's sharers. */
export async function scheduleData(
  engine: Engine,
  workers: () => Promise<WorkerView[]>,
): Promise<ScheduleData> {
  const [scheduler, schedules, limits] = await Promise.all([
    currentScheduler(engine),
    listSchedules(engine),
    listRateLimits(engine),
  ]);
  const live = limits.length > 0 ? await workers() : [];
  return {
    scheduler,
    schedules,
    limits: limits.map((limit) => {
      const serving = live.filter((w) => (w.types ?? []).includes(limit.type)).length;
      const perSecond = (limit.count / limit.perMs) * 1000;
      return {
        ...limit,
        workers: serving,
        perWorkerPerSecond: serving === 0 ? null : Math.round((perSecond / serving) * 1000) / 1000,
      };
    }),
  };
}
