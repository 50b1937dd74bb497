import { Cron } from 'croner';
import { ZoottError } from '../contract/errors.js';
import { validateTaskName } from '../tree/names.js';
import { show } from '../tree/show.js';

/** A schedule as `zoott schedule add` stores it: queue a task of `type` at every cron tick. */
export interface ScheduleSpec {
  /** The schedule's name; tick tasks are named `<name>-<tick time>`. */
  name: string;
  /** Cron expression (5 fields, or 6 with seconds first), as croner reads it. */
  cron: string;
  /** IANA time zone the expression is read in (`Europe/Amsterdam`); missing means UTC. */
  tz?: string;
  /** Task type of the tick tasks. */
  type: string;
  /** Data of every tick task. */
  data?: unknown;
}

/** What is stored at `/zoott_schedules/<world>/<name>`: the spec plus the scheduler's progress. */
export interface StoredSchedule extends ScheduleSpec {
  createdAt: number;
  /** Time (ms) of the last tick whose task was queued; ticks after it are due. */
  lastTick?: number;
}

/** Longest tick task name part a schedule name may leave room for (the time stamp). */
const TICK_SUFFIX_LENGTH = '-20260101T000000Z'.length;

function bad(field: string, why: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', `${field}: ${why}`, { field });
}

/** A time zone name every Intl implementation here accepts, or a clear error. */
function checkTimeZone(tz: unknown): string {
  if (typeof tz !== 'string' || tz.length === 0)
    throw bad('tz', `must be a time zone name, got ${show(tz)}`);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw bad(
      'tz',
      `${JSON.stringify(tz)} is not a known IANA time zone (e.g. Europe/Amsterdam, UTC)`,
    );
  }
  return tz;
}

function cronOf(expr: string, tz: string | undefined): Cron {
  return new Cron(expr, { paused: true, ...(tz !== undefined ? { timezone: tz } : {}) });
}

/**
 * Checks a schedule before anything is written: the name (a task name with room for the
 * tick suffix), the cron expression (parsed by croner, and it must fire at least once), the
 * time zone, the task type. Every problem is INVALID_CONFIG naming the field.
 */
export function validateSchedule(input: unknown): ScheduleSpec {
  if (typeof input !== 'object' || input === null) throw bad('schedule', 'must be an object');
  const fields = input as Record<string, unknown>;
  const known = new Set(['name', 'cron', 'tz', 'type', 'data']);
  for (const key of Object.keys(fields))
    if (!known.has(key)) throw bad(key, 'unknown schedule field');
  let name: string;
  try {
    name = validateTaskName(fields.name, 'name', { maxNameLength: 200 - TICK_SUFFIX_LENGTH });
  } catch (err) {
    throw bad('name', (err as Error).message.replace(/^INVALID_TASK: name /, ''));
  }
  if (typeof fields.type !== 'string' || fields.type.length === 0 || fields.type.length > 200)
    throw bad('type', `must be a task type of 1 to 200 characters, got ${show(fields.type)}`);
  if (typeof fields.cron !== 'string' || fields.cron.trim() === '')
    throw bad('cron', `must be a cron expression, got ${show(fields.cron)}`);
  const tz = fields.tz === undefined ? undefined : checkTimeZone(fields.tz);
  let next: Date | null;
  try {
    next = cronOf(fields.cron, tz).nextRun();
  } catch (err) {
    throw bad('cron', `${JSON.stringify(fields.cron)}: ${(err as Error).message}`);
  }
  if (next === null) throw bad('cron', `${JSON.stringify(fields.cron)} never fires`);
  const spec: ScheduleSpec = { name, cron: fields.cron, type: fields.type };
  if (tz !== undefined) spec.tz = tz;
  if (fields.data !== undefined) spec.data = fields.data;
  return spec;
}

/** The first tick strictly after `after` (ms), or `null` when the expression fires no more. */
export function nextTick(spec: Pick<ScheduleSpec, 'cron' | 'tz'>, after: number): number | null {
  const next = cronOf(spec.cron, spec.tz).nextRun(new Date(after));
  return next === null ? null : next.getTime();
}

/**
 * The tick task's name: the schedule name and the tick time in UTC to the second
 * (`nightly-20260326T020000Z`). Deterministic, so a scheduler that takes over mid-tick
 * finds the task its predecessor queued instead of queueing a second one.
 */
export function tickTaskName(schedule: string, tick: number): string {
  const iso = new Date(tick).toISOString(); // 2026-03-26T02:00:00.000Z
  return `${schedule}-${iso.slice(0, 19).replace(/[-:]/g, '')}Z`;
}
