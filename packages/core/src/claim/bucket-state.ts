import { ENTRY_KIND, type EntryName, parseEntryName } from '../engine/layout.js';
import type { EntryData } from '../engine/types.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { AncestorStat } from './ancestor-guards.js';

/** One pending entry's data as last read. */
export interface CachedEntry {
  version: number;
  czxid: number;
  data: EntryData;
  /** When this claimer first saw the entry (engine clock): start of the locality wait. */
  firstSeen: number;
  /** This claimer claimed this entry version; it is skipped until the entry changes. */
  claimed?: boolean;
}

/** The cached listing of one pending bucket. */
export interface BucketState {
  entries: EntryName[];
  present: Set<string>;
  cache: Map<string, CachedEntry>;
  /** Must be re-listed before use (watch fired, or a claim found it out of date). */
  stale: boolean;
  /**
   * Change events so far (children watch, tree watch), and how many of them had come in when
   * the current listing's read went out: whether the bucket changed since (see
   * `BucketListings.mayHideChildOf`).
   */
  changes: number;
  listedChanges: number;
  watchArmed: boolean;
  /**
   * The bucket's `pzxid` as read with the listing: the last change of its children that the
   * listing shows (a child's claim is guarded by it, see `ancestorGuards`).
   */
  pzxid: number;
  /** Ancestors' tree-node stats read to guard children (see ancestorGuards), by encoded key. */
  guardStats: Map<string, AncestorStat>;
  /** When the listing was read (engine clock). */
  listedAt: number;
  /** Parsed names of the last listing: a re-list parses only the names it has not seen. */
  parsed: Map<string, EntryName>;
  /** Entry reads in flight, by entry name. */
  fetching: Map<string, Promise<CachedEntry | null>>;
  /** Read-aheads in flight (a child's entry and its ancestors' tree nodes), by entry name. */
  readingAhead: Map<string, Promise<unknown>>;
  /** The listing being read now, so two claims never read one bucket twice at once. */
  listing: Promise<void> | null;
  /** The claim call that last listed this bucket. */
  listedIn: number;
  /** Entry-shaped names whose data is not a zoott entry: skipped, logged once while listed. */
  bad: Set<string>;
  /** Encoded keys that are proper ancestors of a listed entry (they block someone). */
  ancestors: Set<string>;
  /** Number of the last listing read sent for this bucket (see `BucketListings.readsStarted`). */
  readNo: number;
  /** This bucket must be read again for a child an own settle made runnable. */
  unblockPending: boolean;
  /**
   * Names of entries this process completed (deleted) that a listing may still show: one read
   * before the completion. Such a name is left out of the listing: it blocks nobody any more.
   */
  gone: Set<string>;
  /** A listed entry waited only on a task this process completed: a claim call is due. */
  childReady: boolean;
  /**
   * Entries added from tree events since the listing, while every creation after the listing
   * was being reported (see `EntryEvents`): once one is read, its creation zxid is a `pzxid`
   * the listing and the events together have seen.
   */
  eventBorn: Set<string>;
}

/** A bucket not listed yet: stale, so its first use reads it. */
export function emptyBucket(): BucketState {
  return {
    entries: [],
    present: new Set(),
    cache: new Map(),
    stale: true,
    changes: 0,
    listedChanges: 0,
    watchArmed: false,
    listedAt: 0,
    pzxid: 0,
    guardStats: new Map(),
    listing: null,
    listedIn: 0,
    parsed: new Map(),
    fetching: new Map(),
    readingAhead: new Map(),
    bad: new Set(),
    ancestors: new Set(),
    readNo: -1,
    unblockPending: false,
    gone: new Set(),
    childReady: false,
    eventBorn: new Set(),
  };
}

/** Claim order: higher priority first, then FIFO (the entry's sequence number). */
export const byClaimOrder = (a: EntryName, b: EntryName): number =>
  a.priority !== b.priority ? b.priority - a.priority : a.seq - b.seq;

/** Adds every proper ancestor of `key` (encoded) to `into`. */
export function addAncestors(key: string, into: Set<string>): void {
  for (let i = key.lastIndexOf(KEY_SEPARATOR); i > 0; i = key.lastIndexOf(KEY_SEPARATOR, i - 1)) {
    const parent = key.slice(0, i);
    // Its own ancestors went in with it.
    if (into.has(parent)) return;
    into.add(parent);
  }
}

/**
 * Adds an entry the listing does not show yet (its creation was reported by a tree watch)
 * in claim order, as a listing read now would show it. Returns false when the listing
 * already shows it or showed it once (a name is never reused), or when the bucket was never
 * listed (a listing of one entry would hide the rest of the bucket). A listing out now
 * replaces it all when it returns. It shows the entry when the server read it after the
 * creation; when its reply and this event came in together, the event is handled first and
 * the reply lacks the entry: so a creation reported while a listing is out is never
 * `continuous`, and counts as a change (entry-events.test.ts, "a root reported while a
 * listing is out"). `continuous`: every creation since the listing was read has been
 * reported, in order, so this entry's creation is a point the view is complete to (its zxid
 * is read with the entry).
 */
export function insertListed(st: BucketState, e: EntryName, continuous: boolean): boolean {
  if (st.readNo < 0) return false;
  if (st.parsed.has(e.name) || st.gone.has(e.name)) return false;
  st.parsed.set(e.name, e);
  st.present.add(e.encodedKey);
  if (e.encodedKey.includes(KEY_SEPARATOR)) addAncestors(e.encodedKey, st.ancestors);
  // Most new entries go last (FIFO within a priority): search from the end.
  let at = st.entries.length;
  while (at > 0 && byClaimOrder(st.entries[at - 1]!, e) > 0) at--;
  st.entries.splice(at, 0, e);
  st.changes++;
  if (continuous) st.eventBorn.add(e.name);
  return true;
}

/**
 * Whether a proper ancestor of `key` (encoded) other than `except` is in `present` (it blocks
 * the task).
 */
export function hasListedAncestor(
  key: string,
  present: ReadonlySet<string>,
  except?: string,
): boolean {
  for (let i = key.indexOf(KEY_SEPARATOR); i > 0; i = key.indexOf(KEY_SEPARATOR, i + 1)) {
    const ancestor = key.slice(0, i);
    if (ancestor !== except && present.has(ancestor)) return true;
  }
  return false;
}

/**
 * A listed entry that a claim could take if it is runnable: its data (`null` when not read
 * yet), or `undefined` when it is no candidate at all (dead, held here, busy elsewhere, gone,
 * bad, or claimed here).
 */
export function openEntry(
  st: BucketState,
  e: EntryName,
  held: ReadonlySet<string>,
  busy: ReadonlySet<string>,
): CachedEntry | null | undefined {
  if (e.kind === ENTRY_KIND.dead || held.has(e.encodedKey) || busy.has(e.encodedKey))
    return undefined;
  if (st.gone.has(e.name) || st.bad.has(e.name)) return undefined;
  const cached = st.cache.get(e.name);
  if (cached?.claimed) return undefined;
  return cached ?? null;
}

/**
 * Makes `st` the listing a read returned: `names` (the bucket's children) with the bucket's
 * `pzxid`, read when `changesBefore` changes had been seen. `settled`: names of own claims
 * settled before the read went out. Names an own completion deleted after the read went out
 * (`gone`) are left out: they block nobody, and a listed child of one is flagged
 * `childReady` (a claim is due). Returns whether the listing was behind an own completion.
 */
export function applyListing(
  st: BucketState,
  names: readonly string[],
  pzxid: number,
  changesBefore: number,
  settled: readonly string[],
): boolean {
  const entries: EntryName[] = [];
  const present = new Set<string>();
  const parsed = new Map<string, EntryName>();
  const ancestors = new Set<string>();
  const stillShown = new Set<string>();
  for (const n of names) {
    if (st.gone.has(n)) {
      stillShown.add(n);
      continue;
    }
    const e = st.parsed.get(n) ?? parseEntryName(n);
    if (!e) continue;
    parsed.set(n, e);
    entries.push(e);
    present.add(e.encodedKey);
    if (e.encodedKey.includes(KEY_SEPARATOR)) addAncestors(e.encodedKey, ancestors);
  }
  st.parsed = parsed;
  st.ancestors = ancestors;
  // A name this listing no longer shows will not come back (entry names are never reused).
  st.gone = stillShown;
  entries.sort(byClaimOrder);
  // Cached and bad names are all entry-shaped, so `parsed` says whether they are still listed.
  for (const name of st.cache.keys()) if (!parsed.has(name)) st.cache.delete(name);
  // A settled claim whose entry is still listed is not ours any more (its settle was
  // refused, or it was re-entered under the same name): read it afresh when it comes up.
  for (const name of settled) st.cache.delete(name);
  for (const name of st.bad) if (!parsed.has(name)) st.bad.delete(name);
  st.entries = entries;
  st.present = present;
  st.listedChanges = changesBefore;
  for (const n of stillShown)
    if (ancestors.has(parseEntryName(n)?.encodedKey ?? '')) st.childReady = true;
  st.pzxid = pzxid;
  st.eventBorn.clear();
  // Kept for ancestors still listed above someone; the others' stats are dropped.
  for (const id of st.guardStats.keys()) if (!ancestors.has(id)) st.guardStats.delete(id);
  return stillShown.size > 0;
}

/** Names of entries claimed from `st` whose claims this process (`held`) no longer holds. */
export function settledClaims(st: BucketState, held: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [name, cached] of st.cache) {
    if (!cached.claimed) continue;
    const key = st.parsed.get(name)?.encodedKey;
    if (key !== undefined && !held.has(key)) out.push(name);
  }
  return out;
}
