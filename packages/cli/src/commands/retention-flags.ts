import type { RetentionPatch, RetentionSettings } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';

/** The retention flags `init` and `retention` share, as commander stores them. */
export interface RetentionFlags {
  completed?: string;
  maxCompleted?: string;
  results?: string;
  maxResults?: string;
  maxFailed?: string;
}

/** Adds the retention flags to a command (`init`, `retention`). */
export function withRetentionFlags(cmd: Command): Command {
  return cmd
    .option('--completed <duration>', 'keep completed records this long (30m, 24h, 7d, forever)')
    .option('--max-completed <n>', 'keep at most this many completed records (or unlimited)')
    .option('--results <duration>', 'keep reply results nobody consumed this long')
    .option('--max-results <n>', 'keep at most this many unconsumed reply results')
    .option('--max-failed <n>', 'warn when more failed records than this are kept');
}

/**
 * The settings change the flags ask for (`null` when none was given), every flag parsed
 * before anything is written: a bad one names itself and changes nothing.
 */
export async function retentionPatch(flags: RetentionFlags): Promise<RetentionPatch | null> {
  const { parseCount, parseDuration } = await import('@zoott/core');
  const parse = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw new CliError((err as Error).message);
    }
  };
  const patch: RetentionPatch = {};
  const given = flags;
  if (given.completed !== undefined || given.maxCompleted !== undefined)
    patch.completed = {
      ...(given.completed !== undefined
        ? { maxAgeMs: parse(() => parseDuration(given.completed!, '--completed')) }
        : {}),
      ...(given.maxCompleted !== undefined
        ? { maxCount: parse(() => parseCount(given.maxCompleted!, '--max-completed')) }
        : {}),
    };
  if (given.results !== undefined || given.maxResults !== undefined)
    patch.results = {
      ...(given.results !== undefined
        ? { maxAgeMs: parse(() => parseDuration(given.results!, '--results')) }
        : {}),
      ...(given.maxResults !== undefined
        ? { maxCount: parse(() => parseCount(given.maxResults!, '--max-results')) }
        : {}),
    };
  if (given.maxFailed !== undefined)
    patch.failed = { warnCount: parse(() => parseCount(given.maxFailed!, '--max-failed')) };
  return Object.keys(patch).length === 0 ? null : patch;
}

/** The settings as people read them: `24h, at most 100000`. */
export async function describeRetention(
  settings: RetentionSettings,
): Promise<Record<string, string>> {
  const { formatKeepCount, formatKeepDuration } = await import('@zoott/core/internal');
  const keep = (limits: { maxAgeMs: number | null; maxCount: number | null }) =>
    limits.maxAgeMs === null && limits.maxCount === null
      ? 'forever, unlimited (grows without bound)'
      : `${formatKeepDuration(limits.maxAgeMs)}, at most ${formatKeepCount(limits.maxCount)}`;
  return {
    completed: keep(settings.completed),
    results: keep(settings.results),
    failed: `until retried or cancelled; warn past ${formatKeepCount(settings.failed.warnCount)}`,
  };
}

/** The settings as stored, for --json documents. */
export function retentionJson(settings: RetentionSettings, stored: boolean): object {
  return { ...settings, stored };
}
