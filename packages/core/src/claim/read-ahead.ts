import type { EngineContext } from '../engine/context.js';
import { ENTRY_KIND, type EntryName } from '../engine/layout.js';
import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';
import { ancestorGuards } from './ancestor-guards.js';
import type { BucketState, CachedEntry } from './bucket-state.js';

/** What a read-ahead needs of the listings (`BucketListings`). */
export interface EntryReader {
  fetch(bucketNo: number, bucket: BucketState, entry: EntryName): Promise<CachedEntry | null>;
  readonly lookahead: number;
}

/**
 * A listed child waits only on a task this process runs: its entry and ancestors' tree nodes
 * are read now, so its claim is one write away (an early stat is safe: the check holds it).
 * The read is kept in the bucket's `readingAhead` while it is out: a completion of the parent
 * may wait for it (see `hand-off.ts`).
 */
export function readAhead(
  ctx: EngineContext,
  listings: EntryReader,
  bucketNo: number,
  bucket: BucketState,
  entry: EntryName,
  key: TaskKey,
): void {
  // Once per entry: later calls find it cached (or its read in flight).
  if (bucket.readOrReading(entry.name)) return;
  const ahead = Promise.all([
    listings.fetch(bucketNo, bucket, entry),
    ancestorGuards(ctx, key, Number.POSITIVE_INFINITY, bucket),
  ]).catch(() => undefined);
  bucket.readAheadStarted(entry.name, ahead);
}

/** Reads ahead the listed children of `parent`, which this process has just claimed. */
export function childrenAhead(
  ctx: EngineContext,
  listings: EntryReader,
  bucketNo: number,
  bucket: BucketState,
  parent: TaskKey,
): void {
  const prefix = `${parent.join(KEY_SEPARATOR)}${KEY_SEPARATOR}`;
  let count = 0;
  for (const entry of bucket.entries) {
    if (count >= listings.lookahead) return;
    const direct =
      entry.encodedKey.startsWith(prefix) &&
      !entry.encodedKey.includes(KEY_SEPARATOR, prefix.length);
    if (!direct || entry.kind === ENTRY_KIND.dead) continue;
    count++;
    readAhead(ctx, listings, bucketNo, bucket, entry, entry.encodedKey.split(KEY_SEPARATOR));
  }
}
