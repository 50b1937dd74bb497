import { ZoottError } from '../contract/errors.js';
import { show } from '../tree/show.js';

/** A rate: at most `count` task starts per `perMs` milliseconds, across the whole world. */
export interface Rate {
  count: number;
  perMs: number;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };
const RATE_RE = /^(\d+(?:\.\d+)?)\/(s|m|h)$/;
/** Highest rate a limit may name: beyond it a limit is no limit. */
export const MAX_RATE_PER_SECOND = 1_000_000;

/**
 * Reads `20/s`, `100/m`, `0.5/s`, `3000/h`. INVALID_CONFIG (field `rate`) for anything else,
 * for zero, and for more than a million per second.
 */
export function parseRate(text: unknown): Rate {
  const bad = (why: string) =>
    new ZoottError('INVALID_CONFIG', `rate ${show(text)}: ${why}`, { field: 'rate' });
  if (typeof text !== 'string') throw bad('must be text like 20/s');
  const match = RATE_RE.exec(text.trim());
  if (!match) throw bad('expected <number>/<s|m|h>, e.g. 20/s, 100/m or 3000/h');
  const count = Number(match[1]);
  const perMs = UNITS[match[2]!]!;
  if (!(count > 0)) throw bad('must be more than zero (remove the limit to stop limiting)');
  if ((count / perMs) * 1000 > MAX_RATE_PER_SECOND) throw bad(`at most ${MAX_RATE_PER_SECOND}/s`);
  return { count, perMs };
}

/** `20/s` for a Rate (the unit it was given in is kept by `perMs`). */
export function formatRate(rate: Rate): string {
  const unit = rate.perMs === 1000 ? 's' : rate.perMs === 60_000 ? 'm' : 'h';
  return `${rate.count}/${unit}`;
}

/** Task starts per millisecond. */
export function perMs(rate: Rate): number {
  return rate.count / rate.perMs;
}
