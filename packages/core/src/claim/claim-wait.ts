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
  const d = cached.data;
  if (opts.paused?.(d.type)) return Number.POSITIVE_INFINITY;
  if (opts.types !== undefined && !opts.types.includes(d.type)) return Number.POSITIVE_INFINITY;
  const gate = opts.gate;
  if (gate && !gate.open(d.type, now)) return gate.nextAt(d.type, now);
  if (d.notBefore !== undefined && d.notBefore > now) return d.notBefore;
  const hints = d.hints;
  const until = cached.firstSeen + (opts.localityWaitMs ?? DEFAULT_LOCALITY_WAIT_MS);
  if (hints !== undefined && until > now) {
    // Left, for the wait, to a live worker that may match the hints better than this one.
    const mine = hintScore({ priority: 0, seq: 0, hints });
    if (leftForPeer({ type: d.type, hints }, mine, opts.peers?.())) return until;
  }
  return now;
}
