import { type LocalityScore, leftForPeer } from '../tree/ordering.js';
import type { CachedEntry } from './bucket-state.js';
import type { ClaimerOptions } from './claimer-options.js';

/** How long a task hinted to another live worker waits before another worker takes it. */
export const DEFAULT_LOCALITY_WAIT_MS = 2000;

/**
 * When a read entry may be claimed by this claimer: `now` or earlier when it may be now, a
 * later time when it may be then (its rate limit, `notBefore` or locality wait), and
 * `Infinity` when this claimer does not take it (a type not served, or paused).
 */
export function eligibleAt(
  opts: ClaimerOptions,
  hintScore: LocalityScore,
  cached: CachedEntry,
  now: number,
): number {
  const entryData = cached.data;
  if (opts.paused?.(entryData.type)) return Number.POSITIVE_INFINITY;
  if (opts.types !== undefined && !opts.types.includes(entryData.type))
    return Number.POSITIVE_INFINITY;
  const gate = opts.gate;
  if (gate && !gate.open(entryData.type, now)) return gate.nextAt(entryData.type, now);
  if (entryData.notBefore !== undefined && entryData.notBefore > now) return entryData.notBefore;
  const hints = entryData.hints;
  const until = cached.firstSeen + (opts.localityWaitMs ?? DEFAULT_LOCALITY_WAIT_MS);
  if (hints !== undefined && until > now) {
    // Left, for the wait, to a live worker that may match the hints better than this one.
    const mine = hintScore({ priority: 0, seq: 0, hints });
    if (leftForPeer({ type: entryData.type, hints }, mine, opts.peers?.())) return until;
  }
  return now;
}
