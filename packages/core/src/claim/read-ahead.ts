import type { EngineContext } from '../engine/context.js';
import { ENTRY_KIND, type EntryName } from '../engine/layout.js';
import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';
import { ancestorGuards } from './ancestor-guards.js';
import type { BucketState, CachedEntry } from './bucket-state.js';

/** What a read-ahead needs of the listings (`BucketListings`). */
export interface EntryReader {
  fetch(b: number, st: BucketState, e: EntryName): Promise<CachedEntry | null>;
  readonly lookahead: number;
}

/**
 * A listed child waits only on a task this process runs: its entry and ancestors' tree nodes
 * are read now, so its claim is one write away (an early stat is safe: the check holds it).
 * The read is kept in `st.readingAhead` while it is out: a completion of the parent may wait
 * for it (see `hand-off.ts`).
 */
export function readAhead(
  ctx: EngineContext,
  listings: EntryReader,
  b: number,
  st: BucketState,
  e: EntryName,
  key: TaskKey,
): void {
  // Once per entry: later calls find it cached (or its read in flight).
  if (st.cache.has(e.name) || st.fetching.has(e.name)) return;
  const ahead = Promise.all([
    listings.fetch(b, st, e),
    ancestorGuards(ctx, key, Number.POSITIVE_INFINITY, st.guardStats),
  ])
    .catch(() => undefined)
    .finally(() => st.readingAhead.delete(e.name));
  st.readingAhead.set(e.name, ahead);
}

/** Reads ahead the listed children of `parent`, which this process has just claimed. */
export function childrenAhead(
  ctx: EngineContext,
  listings: EntryReader,
  b: number,
  st: BucketState,
  parent: TaskKey,
): void {
  const prefix = `${parent.join(KEY_SEPARATOR)}${KEY_SEPARATOR}`;
  let n = 0;
  for (const e of st.entries) {
    if (n >= listings.lookahead) return;
    const direct =
      e.encodedKey.startsWith(prefix) && !e.encodedKey.includes(KEY_SEPARATOR, prefix.length);
    if (!direct || e.kind === ENTRY_KIND.dead) continue;
    n++;
    readAhead(ctx, listings, b, st, e, e.encodedKey.split(KEY_SEPARATOR));
  }
}
