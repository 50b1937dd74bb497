import type { CachedEntry } from './bucket-state.js';

/**
 * When hinted entries of a bucket were first read, kept across the drops of its listing. A
 * bucket this claimer does not watch is listed afresh by each steal pass and its listing is
 * dropped by the next claim over the owned buckets; a locality wait must run from the first
 * sight, not from the last re-read, or a worker stealing from a busy holder's bucket would
 * leave a hinted task there for as long as the holder lives. Only hinted entries (the wait is
 * theirs) are kept, and only while a listing of their bucket still shows them.
 */
export class FirstSights {
  private readonly byBucket = new Map<number, Map<string, number>>();

  /** Remembers the first sights of the hinted entries of `cache`, whose listing is dropped. */
  keep(bucket: number, cache: ReadonlyMap<string, CachedEntry>): void {
    const kept = this.byBucket.get(bucket) ?? new Map<string, number>();
    for (const [name, cached] of cache)
      if (cached.data.hints !== undefined) kept.set(name, cached.firstSeen);
    if (kept.size > 0) this.byBucket.set(bucket, kept);
  }

  /** When entry `name` of `bucket` was first seen, or `now` when it was not seen before. */
  of(bucket: number, name: string, now: number): number {
    return this.byBucket.get(bucket)?.get(name) ?? now;
  }

  /** Forgets the entries of `bucket` that its new listing no longer shows (names never return). */
  prune(bucket: number, listed: ReadonlyMap<string, unknown>): void {
    const kept = this.byBucket.get(bucket);
    if (!kept) return;
    for (const name of kept.keys()) if (!listed.has(name)) kept.delete(name);
    if (kept.size === 0) this.byBucket.delete(bucket);
  }
}
