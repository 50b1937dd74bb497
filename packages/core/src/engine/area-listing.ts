import type { Coordinator } from '../contract/coordinator.js';
import { codeOf } from './errors.js';
import type { WorldLayout } from './layout.js';
import { AREA, byClaimOrder, ENTRY_KIND, type EntryName, parseEntryName } from './layout.js';

/*
 * What the operator views (the CLI's `ls`, `status` and `workers`, the dashboard) read of a
 * world's buckets, in the layout's own terms: they name an area by its role and get entries
 * and records with their paths, so no program outside core knows an area's letter, how a
 * bucket's path is made or how an entry's name is taken apart.
 */

/** A bucketed area by its role. */
export type BucketArea = keyof typeof AREA;

/** A pending entry as listed, with its path. */
export interface ListedEntry extends EntryName {
  path: string;
}

/** A record (working claim, completed or failed record) as listed: its key, encoded, and path. */
export interface ListedRecord {
  encodedKey: string;
  path: string;
}

/** One bucket's listing in the areas asked for (the others are empty). */
export interface BucketContents {
  bucket: number;
  /** Entries, in claim order; a child that is no entry (another client's) is left out. */
  pending: ListedEntry[];
  working: ListedRecord[];
  completed: ListedRecord[];
  failed: ListedRecord[];
}

export interface ListBucketOptions {
  /**
   * A bucket node that does not exist: `'empty'` lists nothing (a world half made, or half
   * removed), `'error'` (the default) rethrows NO_NODE.
   */
  absent?: 'empty' | 'error';
}

/** Every bucket number of the world, `0`..`buckets - 1`. */
export function bucketNumbers(layout: WorldLayout): number[] {
  return Array.from({ length: layout.buckets }, (_, bucket) => bucket);
}

/** Lists `bucket` in each of `areas`, all at once. */
export async function listBucket(
  coordinator: Coordinator,
  layout: WorldLayout,
  bucket: number,
  areas: readonly BucketArea[],
  options: ListBucketOptions = {},
): Promise<BucketContents> {
  const out: BucketContents = { bucket, pending: [], working: [], completed: [], failed: [] };
  await Promise.all(
    areas.map(async (area) => {
      const dir = layout.bucketPath(AREA[area], bucket);
      let names: string[];
      try {
        names = await coordinator.children(dir);
      } catch (err) {
        if (options.absent === 'empty' && codeOf(err) === 'NO_NODE') return;
        throw err;
      }
      if (area === 'pending') {
        const entries = names.flatMap((name) => parseEntryName(name) ?? []);
        out.pending = entries
          .sort(byClaimOrder)
          .map((entry) => ({ ...entry, path: `${dir}/${entry.name}` }));
      } else out[area] = names.map((name) => ({ encodedKey: name, path: `${dir}/${name}` }));
    }),
  );
  return out;
}

/** Whether an entry is dead: a task that failed for good, still blocking its descendants. */
export function isDeadEntry(entry: EntryName): boolean {
  return entry.kind === ENTRY_KIND.dead;
}

/**
 * The state an entry shows: a dead entry's task has failed, an entry whose key is among
 * `claimed` (encoded keys of live claims) is working, any other is pending.
 */
export function entryState(
  entry: EntryName,
  claimed: ReadonlySet<string>,
): 'failed' | 'working' | 'pending' {
  if (isDeadEntry(entry)) return 'failed';
  return claimed.has(entry.encodedKey) ? 'working' : 'pending';
}

/** The entries waiting to run: neither dead nor claimed (see {@link entryState}). */
export function waitingEntries<T extends EntryName>(
  entries: readonly T[],
  claimed: ReadonlySet<string>,
): T[] {
  return entries.filter((entry) => entryState(entry, claimed) === 'pending');
}
