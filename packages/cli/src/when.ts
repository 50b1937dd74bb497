import { CliError } from './errors.js';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Longest delay accepted: a year (a typo like `30000d` is caught, not queued for decades). */
export const MAX_DELAY_MS = 366 * 86_400_000;

/**
 * A delay such as `30s`, `5m`, `1h30m`, `500ms` or `2d` (a bare number is seconds), in ms.
 * Throws a CliError naming `what` for anything else.
 */
export function parseDelay(text: string, what: string): number {
  const trimmed = text.trim();
  const bad = (why: string) =>
    new CliError(`${what} ${JSON.stringify(text)}: ${why}`, 2, 'e.g. 30s, 5m, 1h30m, 500ms, 2d');
  if (/^\d+(\.\d+)?$/.test(trimmed)) return check(Number(trimmed) * 1000, bad);
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(trimmed))
    throw bad('not a duration (a number with a unit: ms, s, m, h, d)');
  let ms = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g))
    ms += Number(amount) * UNIT_MS[unit!]!;
  return check(ms, bad);
}

function check(ms: number, bad: (why: string) => CliError): number {
  if (!Number.isFinite(ms) || ms > MAX_DELAY_MS) throw bad('must be at most 366 days');
  return Math.round(ms);
}

const ISO =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An ISO 8601 time (`2026-11-26T12:00:00Z`, `2026-11-26T13:00+01:00`; without an offset it is
 * local time), in ms since the epoch. Throws a CliError naming `what` for anything else.
 */
export function parseAt(text: string, what: string): number {
  const trimmed = text.trim();
  const ms = ISO.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new CliError(
      `${what} ${JSON.stringify(text)}: not an ISO 8601 time`,
      2,
      'e.g. 2026-11-26T12:00:00Z, or 2026-11-26T13:00+01:00',
    );
  return ms;
}

/**
 * The `notBefore` of a task from `--delay` or `--at` (one of them at most), or undefined when
 * neither is given. `now` is when the delay counts from. `line` names a `queue --from` line
 * (its fields are `"delay"` and `"at"`) instead of the flags.
 */
export function notBeforeOf(
  delay: string | undefined,
  at: string | undefined,
  now: number,
  line?: string,
): number | undefined {
  const [delayName, atName] = line === undefined ? ['--delay', '--at'] : ['"delay"', '"at"'];
  const where = line === undefined ? '' : `${line}: `;
  if (delay !== undefined && at !== undefined)
    throw new CliError(`${where}give ${delayName} or ${atName}, not both`);
  if (delay !== undefined) return now + parseDelay(delay, `${where}${delayName}`);
  if (at !== undefined) return parseAt(at, `${where}${atName}`);
  return undefined;
}
