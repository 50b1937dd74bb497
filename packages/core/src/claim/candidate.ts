import type { Op } from '../contract/coordinator.js';
import type { EntryName } from '../engine/layout.js';
import type { EntryData } from '../engine/types.js';
import type { CachedEntry } from './bucket-state.js';

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
  const candidate: Candidate = {
    priority: entry.priority,
    seq: cached.czxid,
    bucket,
    entry,
    cached,
  };
  if (cached.data.hints) candidate.hints = cached.data.hints;
  if (typeof cached.data.qn === 'number') candidate.tie = cached.data.qn;
  return candidate;
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
