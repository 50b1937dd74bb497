import type { Coordinator } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { codeOf } from '../engine/errors.js';
import { worldRoot } from '../tree/keys.js';
import { INTERNAL_WORLD_MARK } from '../tree/names.js';

/** How long and how many of one kind of record a world keeps; `null` = no limit. */
export interface KeepLimits {
  /** Records older than this (ms) go. */
  maxAgeMs: number | null;
  /** Beyond this many, the oldest go. */
  maxCount: number | null;
}

/**
 * What a world keeps, stored in its meta (`/zoott_<world>`, field `retention`) so every
 * worker, CLI and dashboard reads the same settings.
 */
export interface RetentionSettings {
  /** Completed records (and with them the tree nodes of completed leaves). */
  completed: KeepLimits;
  /** Reply results nobody consumed, in reply directories this world created. */
  results: KeepLimits;
  /** Failed records stay until retried or cancelled; past `warnCount` the reaper warns. */
  failed: { warnCount: number | null };
}

const HOUR = 3_600_000;

/**
 * The defaults keep a world bounded: a day, at most 100,000 completed records and 10,000
 * unconsumed results. A world without stored settings (made before retention existed) gets
 * them too; only an explicit `forever` / `unlimited` lets a world grow without bound.
 */
export const DEFAULT_RETENTION: RetentionSettings = Object.freeze({
  completed: Object.freeze({ maxAgeMs: 24 * HOUR, maxCount: 100_000 }),
  // A reply directory must stay listable in one reply (~1 MB, ~45,000 result names).
  results: Object.freeze({ maxAgeMs: 24 * HOUR, maxCount: 10_000 }),
  failed: Object.freeze({ warnCount: 10_000 }),
}) as RetentionSettings;

/** A change of some settings; the others stay as stored. */
export interface RetentionPatch {
  completed?: Partial<KeepLimits>;
  results?: Partial<KeepLimits>;
  failed?: Partial<RetentionSettings['failed']>;
}

/** Longest duration accepted: 100 years (anything longer is `forever`). */
const MAX_DURATION_MS = 100 * 365 * 24 * HOUR;
/** Largest count accepted (anything larger is `unlimited`). */
const MAX_COUNT = 1_000_000_000;

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: HOUR,
  d: 24 * HOUR,
  w: 7 * 24 * HOUR,
};
const FOREVER = new Set(['forever', 'never', 'unlimited', 'none']);

function invalid(field: string, message: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', `${field}: ${message}`, { field });
}

/**
 * A duration as people write it: `90s`, `15m`, `24h`, `7d`, `2w`, `500ms`, combinations such
 * as `1h30m`, or `forever` (no age limit, `null`). Must be more than zero.
 */
export function parseDuration(text: string, field = 'duration'): number | null {
  const lowered = text.trim().toLowerCase();
  if (FOREVER.has(lowered)) return null;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let at = 0;
  for (let m = re.exec(lowered); m; m = re.exec(lowered)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    at = re.lastIndex;
  }
  if (lowered.length === 0 || at !== lowered.length)
    throw invalid(
      field,
      `${JSON.stringify(text)} is not a duration: write a number with a unit (ms, s, m, h, d, w), e.g. 30m, 24h, 7d, or "forever"`,
    );
  const ms = Math.round(total);
  if (ms <= 0) throw invalid(field, `${JSON.stringify(text)}: must be longer than zero`);
  if (ms > MAX_DURATION_MS)
    throw invalid(field, `${JSON.stringify(text)}: longer than 100 years; write "forever"`);
  return ms;
}

/** A count: a whole number >= 0 (`_` and `,` as digit separators), or `unlimited` (`null`). */
export function parseCount(text: string, field = 'count'): number | null {
  const lowered = text.trim().toLowerCase();
  if (FOREVER.has(lowered)) return null;
  const digits = lowered.replace(/[_,]/g, '');
  if (!/^\d+$/.test(digits))
    throw invalid(
      field,
      `${JSON.stringify(text)} is not a count: write a whole number >= 0, or "unlimited"`,
    );
  const count = Number(digits);
  if (count > MAX_COUNT)
    throw invalid(field, `${JSON.stringify(text)}: more than ${MAX_COUNT}; write "unlimited"`);
  return count;
}

/**
 * `24h`, `90m`, `7d`, `forever`: an exact spelling in the largest unit, except that days and
 * weeks need two of them (a day reads `24h`, as people usually set it).
 */
export function formatKeepDuration(ms: number | null): string {
  if (ms === null) return 'forever';
  for (const unit of ['w', 'd', 'h', 'm', 's'] as const) {
    const count = ms / UNITS[unit]!;
    if (Number.isInteger(count) && (count >= 2 || (unit !== 'w' && unit !== 'd')))
      return `${count}${unit}`;
  }
  return `${ms}ms`;
}

/** `100000` or `unlimited`. */
export function formatKeepCount(count: number | null): string {
  return count === null ? 'unlimited' : String(count);
}

function checkNumber(value: unknown, field: string, min: number, max: number): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw invalid(
      field,
      `${JSON.stringify(value)}: must be null or an integer in [${min}, ${max}]`,
    );
  return value;
}

function keep(value: unknown, field: string, fallback: KeepLimits): KeepLimits {
  if (value === undefined) return { ...fallback };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(field, 'must be an object {maxAgeMs, maxCount}');
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields))
    if (key !== 'maxAgeMs' && key !== 'maxCount')
      throw invalid(`${field}.${key}`, 'unknown setting');
  return {
    maxAgeMs:
      fields.maxAgeMs === undefined
        ? fallback.maxAgeMs
        : checkNumber(fields.maxAgeMs, `${field}.maxAgeMs`, 1, MAX_DURATION_MS),
    maxCount:
      fields.maxCount === undefined
        ? fallback.maxCount
        : checkNumber(fields.maxCount, `${field}.maxCount`, 0, MAX_COUNT),
  };
}

/**
 * Settings completed from `base` by `patch` (or stored settings read back), every field
 * checked: an error names the field, and nothing is written with it.
 */
export function mergeRetention(
  base: RetentionSettings,
  patch: unknown,
  field = 'retention',
): RetentionSettings {
  if (patch === undefined || patch === null) return structuredClone(base);
  if (typeof patch !== 'object' || Array.isArray(patch)) throw invalid(field, 'must be an object');
  const patchFields = patch as Record<string, unknown>;
  for (const key of Object.keys(patchFields))
    if (key !== 'completed' && key !== 'results' && key !== 'failed')
      throw invalid(`${field}.${key}`, 'unknown setting (completed, results, failed)');
  let failed = { ...base.failed };
  if (patchFields.failed !== undefined) {
    const failedFields = patchFields.failed as Record<string, unknown> | null;
    if (typeof failedFields !== 'object' || failedFields === null || Array.isArray(failedFields))
      throw invalid(`${field}.failed`, 'must be an object {warnCount}');
    for (const key of Object.keys(failedFields))
      if (key !== 'warnCount') throw invalid(`${field}.failed.${key}`, 'unknown setting');
    if (failedFields.warnCount !== undefined)
      failed = {
        warnCount: checkNumber(failedFields.warnCount, `${field}.failed.warnCount`, 0, MAX_COUNT),
      };
  }
  return {
    completed: keep(patchFields.completed, `${field}.completed`, base.completed),
    results: keep(patchFields.results, `${field}.results`, base.results),
    failed,
  };
}

/**
 * The world whose settings apply: an internal world (`<world>~races`) keeps what its user
 * world keeps, so one `zoott retention` covers both.
 */
export function settingsWorld(world: string): string {
  const at = world.indexOf(INTERNAL_WORLD_MARK);
  return at < 0 ? world : world.slice(0, at);
}

/** The stored settings of a world, with whether they were stored or are the defaults. */
export interface StoredRetention {
  settings: RetentionSettings;
  stored: boolean;
  /** Version of the world meta node they were read from. */
  version: number;
}

async function readMeta(
  coordinator: Coordinator,
  world: string,
  watch?: () => void,
): Promise<{ meta: Record<string, unknown>; version: number; path: string }> {
  const path = worldRoot(world);
  let got: Awaited<ReturnType<Coordinator['get']>>;
  try {
    got = await coordinator.get(path, watch ? { watch } : undefined);
  } catch (err) {
    if (codeOf(err) === 'NO_NODE')
      throw new ZoottError(
        'WORLD_NOT_INITIALISED',
        `world ${world} is not initialised (no ${path}); call init first`,
        { path },
      );
    throw err;
  }
  const meta = got.data.length === 0 ? {} : decodeJson<unknown>(got.data, path);
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
    throw new ZoottError('INVALID_CONFIG', `${path} does not hold zoott world meta`, { path });
  return { meta: meta as Record<string, unknown>, version: got.stat.version, path };
}

/**
 * A world's retention settings (the defaults where none are stored). `watch` is called once
 * when the world meta changes.
 */
export async function readRetention(
  coordinator: Coordinator,
  world: string,
  watch?: () => void,
): Promise<StoredRetention> {
  const settingsName = settingsWorld(world);
  const { meta, version } = await readMeta(coordinator, settingsName, watch);
  return {
    settings: mergeRetention(
      DEFAULT_RETENTION,
      meta.retention,
      `${worldRoot(settingsName)} retention`,
    ),
    stored: meta.retention !== undefined,
    version,
  };
}

/**
 * Changes a world's settings: the patch is checked in full first, then written with a
 * version check on the world meta (a concurrent change makes it read and merge again), so
 * the meta never holds half a change. Returns the settings now stored.
 */
export async function updateRetention(
  coordinator: Coordinator,
  world: string,
  patch: RetentionPatch,
): Promise<RetentionSettings> {
  mergeRetention(DEFAULT_RETENTION, patch, 'retention');
  for (let round = 0; ; round++) {
    const { meta, version, path } = await readMeta(coordinator, settingsWorld(world));
    const current = mergeRetention(DEFAULT_RETENTION, meta.retention, `${path} retention`);
    const next = mergeRetention(current, patch, 'retention');
    try {
      await coordinator.set(path, encodeJson({ ...meta, retention: next }), version);
      return next;
    } catch (err) {
      if (codeOf(err) !== 'BAD_VERSION' || round >= 16) throw err;
    }
  }
}
