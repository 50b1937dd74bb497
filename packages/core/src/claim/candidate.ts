import type { Op } from '../contract/coordinator.js';
import type { EntryName } from '../engine/layout.js';
import type { EntryData } from '../engine/types.js';
import type { BucketState, CachedEntry } from './bucket-state.js';

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
  /** Checks of its ancestors' tree nodes: every child's claim carries them. */
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

/**
 * `known` without the candidates of a lower priority than an `unread` entry (listed in
 * `listedIn[i]`) that its read found gone. Such a task was claimed elsewhere, cancelled, or
 * queued again under a new name the listing lacks: nothing of a lower priority from those
 * listings is claimed before they are read again (the next round), so priority holds for a
 * task queued again while it was listed.
 */
export function belowNoneGone(
  known: Candidate[],
  unread: readonly EntryName[],
  listedIn: readonly BucketState[],
): Candidate[] {
  let top = Number.NEGATIVE_INFINITY;
  unread.forEach((e, i) => {
    if (listedIn[i]!.gone.has(e.name)) top = Math.max(top, e.priority);
  });
  return top === Number.NEGATIVE_INFINITY ? known : known.filter((c) => c.priority >= top);
}

/**
 * Where a steal call starts in its ordered candidates (`random` in [0, 1)). Workers that own
 * no bucket (past one worker per bucket) and idle owners all steal from the same few
 * listings: started at the head, every one of them asks for the same entries and all but
 * one claim multi is refused (about one refused multi per task at 256 workers on 64
 * buckets). So when the best priority class holds more than SPREAD_MIN_WINDOWS times what
 * the call wants, a steal starts at a random place inside that class. Priority still goes
 * first; queue order inside the class is given up for stolen tasks only, which is already
 * loose across workers (each runs several tasks at once). Short classes start at the head.
 */
export function spreadStart(
  candidates: readonly Candidate[],
  wanted: number,
  random: number,
): number {
  const top = candidates[0]?.priority;
  if (top === undefined || wanted <= 0) return 0;
  let inClass = 0;
  while (inClass < candidates.length && candidates[inClass]!.priority === top) inClass++;
  if (inClass <= SPREAD_MIN_WINDOWS * wanted) return 0;
  return Math.floor(random * (inClass - wanted + 1));
}

/** A steal spreads only over a class this many times longer than what it wants. */
const SPREAD_MIN_WINDOWS = 4;
