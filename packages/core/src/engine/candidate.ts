import type { Op } from '../contract/coordinator.js';
import type { CachedEntry } from './bucket-listings.js';
import type { EntryName } from './layout.js';
import type { EntryData } from './types.js';

/** A runnable entry a claim call may take, with what orders it. */
export interface Candidate {
  priority: number;
  /** Queue order: the entry's `czxid`. */
  seq: number;
  /** Position in its `queueMany` call (same `czxid` for the whole call). */
  tie?: number;
  hints?: EntryData['hints'];
  bucket: number;
  entry: EntryName;
  cached: CachedEntry;
  /** Checks of its ancestors' tree nodes, for a child from a listing not up to date. */
  guards?: Op[];
}

/** The candidate for a listed entry whose data was read. */
export function candidateOf(bucket: number, entry: EntryName, cached: CachedEntry): Candidate {
  const c: Candidate = { priority: entry.priority, seq: cached.czxid, bucket, entry, cached };
  if (cached.data.hints) c.hints = cached.data.hints;
  if (typeof cached.data.qn === 'number') c.tie = cached.data.qn;
  return c;
}

/**
 * The known candidates of a higher priority than every listed entry still being read: they
 * may be claimed before those reads are in (none of them could come first).
 */
export function aheadOf(known: readonly Candidate[], unread: readonly EntryName[]): Candidate[] {
  if (unread.length === 0) return [];
  const top = unread.reduce((m, e) => Math.max(m, e.priority), Number.NEGATIVE_INFINITY);
  return known.filter((c) => c.priority > top);
}
