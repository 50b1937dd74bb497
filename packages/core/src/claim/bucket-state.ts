import { ENTRY_KIND, type EntryName, parseEntryName } from '../engine/layout.js';
import type { EntryData } from '../engine/types.js';
import { byClaimOrder } from '../tree/claim-order.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { AncestorStat, GuardStats } from './ancestor-guards.js';
import type { EntryRead } from './entry-read.js';

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

/**
 * The cached listing of one pending bucket, and the invariants that keep it true. Only its
 * own methods write it: the claim path reads it through read-only views and tells it what
 * happened (a listing came back, an event named an entry, an own claim or completion went
 * through), so each invariant is kept in one place.
 */
export class BucketState implements GuardStats {
  #entries: EntryName[] = [];
  #present = new Set<string>();
  #cache = new Map<string, CachedEntry>();
  #stale = true;
  #changes = 0;
  #listedChanges = 0;
  #watchArmed = false;
  #pzxid = 0;
  #guardStats = new Map<string, AncestorStat>();
  #listedAt = 0;
  #parsed = new Map<string, EntryName>();
  /** Number of the listing that last showed each parsed name (`#readsApplied`'s count). */
  readonly #stamps = new Map<string, number>();
  #readsApplied = 0;
  /** Entries `claimedHere` took out of `#entries` since the last listing (still in `#parsed`). */
  readonly #spliced: EntryName[] = [];
  /** Parsed entries whose key another parsed entry holds too (`present` cannot lose it). */
  #sharedKeys = 0;
  readonly #fetching = new Map<string, Promise<CachedEntry | null>>();
  readonly #readingAhead = new Map<string, Promise<unknown>>();
  #listing: Promise<void> | null = null;
  #listedIn = 0;
  #bad = new Set<string>();
  #ancestors = new Set<string>();
  #readNo = -1;
  #unblockPending = false;
  #gone = new Set<string>();
  #childReady = false;
  readonly #eventBorn = new Set<string>();

  /** A bucket not listed yet: stale, so its first use reads it (`readNo` -1: never read). */
  static unlisted(): BucketState {
    return new BucketState();
  }

  private constructor() {}

  /** The listed entries still open to a claim here, in claim order. */
  get entries(): readonly EntryName[] {
    return this.#entries;
  }
  /** Encoded keys of the listed entries (claimed here too, until a listing drops them). */
  get present(): ReadonlySet<string> {
    return this.#present;
  }
  /** Entry data read, by entry name. */
  get cache(): ReadonlyMap<string, CachedEntry> {
    return this.#cache;
  }
  /** Must be re-listed before use (watch fired, or a claim found it out of date). */
  get stale(): boolean {
    return this.#stale;
  }
  /**
   * Change events so far (children watch, tree watch), and how many of them had come in when
   * the current listing's read went out: whether the bucket changed since (see
   * `changedSinceListing`).
   */
  get changes(): number {
    return this.#changes;
  }
  get listedChanges(): number {
    return this.#listedChanges;
  }
  /** A children watch set by a listing of this bucket has not fired yet. */
  get watchArmed(): boolean {
    return this.#watchArmed;
  }
  /**
   * The bucket's `pzxid` as read with the listing: the last change of its children that the
   * listing shows (a child's claim is guarded by it, see `ancestorGuards`).
   */
  get pzxid(): number {
    return this.#pzxid;
  }
  /** Ancestors' tree-node stats read to guard children (see ancestorGuards), by encoded key. */
  get guardStats(): ReadonlyMap<string, AncestorStat> {
    return this.#guardStats;
  }
  /** When the listing was read (engine clock). */
  get listedAt(): number {
    return this.#listedAt;
  }
  /** Parsed names of the last listing: a re-list parses only the names it has not seen. */
  get parsed(): ReadonlyMap<string, EntryName> {
    return this.#parsed;
  }
  /** Read-aheads in flight (a child's entry and its ancestors' tree nodes), by entry name. */
  get readingAhead(): ReadonlyMap<string, Promise<unknown>> {
    return this.#readingAhead;
  }
  /** The listing being read now, so two claims never read one bucket twice at once. */
  get listing(): Promise<void> | null {
    return this.#listing;
  }
  /** The claim call that last listed this bucket. */
  get listedIn(): number {
    return this.#listedIn;
  }
  /** Encoded keys that are proper ancestors of a listed entry (they block someone). */
  get ancestors(): ReadonlySet<string> {
    return this.#ancestors;
  }
  /** Number of the last listing read sent for this bucket (see `BucketListings.nextReadNo`). */
  get readNo(): number {
    return this.#readNo;
  }
  /**
   * Names of entries this process completed (deleted) that a listing may still show: one read
   * before the completion. Such a name is left out of the listing: it blocks nobody any more.
   */
  get gone(): ReadonlySet<string> {
    return this.#gone;
  }
  /** Entry-shaped names whose data is not a zoott entry: skipped, logged once while listed. */
  get bad(): ReadonlySet<string> {
    return this.#bad;
  }
  /** A listed entry waited only on a task this process completed: a claim call is due. */
  get childReady(): boolean {
    return this.#childReady;
  }

  /** Whether the bucket changed since its listing's read went out (or must be read again). */
  changedSinceListing(): boolean {
    return this.#stale || this.#changes !== this.#listedChanges;
  }

  /** The listing must be read again before its next use; it shows no change by itself. */
  markStale(): void {
    this.#stale = true;
  }

  /** Something changed that the listing may not show (a watch fired, an event came). */
  changed(): void {
    this.#stale = true;
    this.#changes++;
  }

  /** Re-read at its next use, however recent the listing (a relisting pause does not apply). */
  relistAtNextUse(): void {
    this.#stale = true;
    this.#listedAt = Number.NEGATIVE_INFINITY;
  }

  /**
   * Re-read at the next use, and own claims' entries read afresh: a claim given back, or a
   * watch changed, may leave the cached data out of date.
   */
  touch(): void {
    this.relistAtNextUse();
    for (const [name, cached] of this.#cache) if (cached.claimed) this.#cache.delete(name);
  }

  /**
   * A listing read goes out as number `readNo`, in claim call `callSeq`, at `now`: it is no
   * longer stale, and it counts the change events seen before it (a change whose event
   * arrives later is not in it). Returns that count, for `applyListing`.
   */
  beginRead(readNo: number, callSeq: number, now: number): number {
    this.#stale = false;
    this.#listedAt = now;
    this.#listedIn = callSeq;
    this.#readNo = readNo;
    return this.#changes;
  }

  /** A children watch goes out with the next listing read (at most one counted as armed). */
  armWatch(): void {
    this.#watchArmed = true;
  }

  /** The children watch fired: one change, and the listing is stale. */
  watchFired(): void {
    this.#watchArmed = false;
    this.changed();
  }

  /** A listing read failed: the listing stays stale, and a watch sent with it is not counted. */
  readFailed(withWatch: boolean): void {
    if (withWatch) this.#watchArmed = false;
    this.#stale = true;
  }

  /** `listing` is the read of this bucket in flight, until `listingEnded(listing)`. */
  listingStarted(listing: Promise<void>): void {
    this.#listing = listing;
  }

  listingEnded(listing: Promise<void>): void {
    if (this.#listing === listing) this.#listing = null;
  }

  /** The read of entry `name` in flight, if any: one read per entry name at a time. */
  fetching(name: string): Promise<CachedEntry | null> | undefined {
    return this.#fetching.get(name);
  }

  fetchStarted(name: string, read: Promise<CachedEntry | null>): void {
    this.#fetching.set(name, read);
  }

  fetchEnded(name: string): void {
    this.#fetching.delete(name);
  }

  /** Whether entry `name` was read, or its read is out. */
  readOrReading(name: string): boolean {
    return this.#cache.has(name) || this.#fetching.has(name);
  }

  /** A read-ahead of entry `name` is out until `ahead` settles (a hand-off may wait for it). */
  readAheadStarted(name: string, ahead: Promise<unknown>): void {
    this.#readingAhead.set(
      name,
      ahead.finally(() => this.#readingAhead.delete(name)),
    );
  }

  /**
   * Makes this the listing a read returned: `names` (the bucket's children) with the bucket's
   * `pzxid`, read when `changesBefore` changes had been seen. `settled`: names of own claims
   * settled before the read went out. Names an own completion deleted after the read went out
   * (`gone`) are left out: they block nobody, and a listed child of one is flagged
   * `childReady` (a claim is due). Returns whether the listing was behind an own completion.
   *
   * A re-read costs what changed, not the bucket's size: a name already known is looked up,
   * not parsed again; the names the read no longer shows are taken out where they are; the new
   * ones alone are sorted, then merged into the listing (which is in claim order already).
   * The keys and ancestors are worked out afresh only when a child entry came or went, or two
   * listed entries share a key.
   */
  applyListing(
    names: readonly string[],
    pzxid: number,
    changesBefore: number,
    settled: readonly string[],
  ): boolean {
    const stamp = ++this.#readsApplied;
    const parsed = this.#parsed;
    const stamps = this.#stamps;
    const added: EntryName[] = [];
    let stillShown: Set<string> | null = null;
    let shownKeys: string[] | null = null;
    let kept = 0;
    for (let at = 0; at < names.length; at++) {
      const name = names[at]!;
      if (this.#gone.has(name)) {
        stillShown ??= new Set();
        stillShown.add(name);
        const key = (parsed.get(name) ?? parseEntryName(name))?.encodedKey;
        if (key !== undefined) {
          shownKeys ??= [];
          shownKeys.push(key);
        }
        continue;
      }
      if (parsed.has(name)) {
        stamps.set(name, stamp);
        kept++;
        continue;
      }
      const entry = parseEntryName(name);
      if (!entry) continue;
      parsed.set(name, entry);
      stamps.set(name, stamp);
      added.push(entry);
    }
    // A name the read no longer shows will not come back (entry names are never reused).
    let treeChanged = this.#forgetUnlisted(parsed.size - kept - added.length, stamp);
    for (let at = 0; at < added.length; at++) {
      const key = added[at]!.encodedKey;
      if (key.includes(KEY_SEPARATOR)) treeChanged = true;
      else if (this.#present.has(key)) this.#sharedKeys++;
      this.#present.add(key);
    }
    // Own claims taken out of the listing (see `claimedHere`) that it still shows go back in:
    // their keys never left `present`.
    const spliced = this.#spliced;
    for (let at = 0; at < spliced.length; at++)
      if (parsed.get(spliced[at]!.name) === spliced[at]) added.push(spliced[at]!);
    spliced.length = 0;
    this.#mergeIn(added);
    if (treeChanged || this.#sharedKeys > 0) this.#keysAfresh();
    this.#gone = stillShown ?? (this.#gone.size === 0 ? this.#gone : new Set());
    // Cached and bad names are all entry-shaped, so `parsed` says whether they are still listed.
    for (const name of this.#cache.keys()) if (!parsed.has(name)) this.#cache.delete(name);
    // A settled claim whose entry is still listed is not ours any more (its settle was
    // refused, or it was re-entered under the same name): read it afresh when it comes up.
    for (const name of settled) this.#cache.delete(name);
    for (const name of this.#bad) if (!parsed.has(name)) this.#bad.delete(name);
    this.#listedChanges = changesBefore;
    if (shownKeys !== null)
      for (const key of shownKeys) if (this.#ancestors.has(key)) this.#childReady = true;
    this.#pzxid = pzxid;
    this.#eventBorn.clear();
    // Kept for ancestors still listed above someone; the others' stats are dropped.
    for (const id of this.#guardStats.keys())
      if (!this.#ancestors.has(id)) this.#guardStats.delete(id);
    return stillShown !== null;
  }

  /**
   * Takes out of the listing the `unlisted` known names that the read numbered `stamp` did not
   * show. Returns whether one of them was a child entry (the ancestors change with it).
   */
  #forgetUnlisted(unlisted: number, stamp: number): boolean {
    if (unlisted === 0) return false;
    const parsed = this.#parsed;
    const stamps = this.#stamps;
    let child = false;
    // forEach, not for-of: no iterator result per name of a big bucket.
    parsed.forEach((entry, name) => {
      if (stamps.get(name) === stamp) return;
      parsed.delete(name);
      stamps.delete(name);
      if (entry.encodedKey.includes(KEY_SEPARATOR)) child = true;
      // Another listed entry may hold the same key: then the keys are worked out afresh.
      else this.#present.delete(entry.encodedKey);
    });
    // In place: the listing keeps the entries still known, in their order.
    const entries = this.#entries;
    let kept = 0;
    for (let at = 0; at < entries.length; at++)
      if (parsed.get(entries[at]!.name) === entries[at]) entries[kept++] = entries[at]!;
    entries.length = kept;
    return child;
  }

  /** Merges `added` (any order) into the listing, which is in claim order: only they are sorted. */
  #mergeIn(added: EntryName[]): void {
    if (added.length === 0) return;
    added.sort(byClaimOrder);
    const entries = this.#entries;
    let from = entries.length - 1;
    for (let at = 0; at < added.length; at++) entries.push(added[at]!);
    // From the back: each slot is written after the entry it held was moved on.
    for (let to = entries.length - 1, next = added.length - 1; next >= 0; to--) {
      const newer = added[next]!;
      if (from >= 0 && byClaimOrder(entries[from]!, newer) > 0) entries[to] = entries[from--]!;
      else {
        entries[to] = newer;
        next--;
      }
    }
  }

  /** The keys of the listed entries, and their ancestors, worked out from the listing. */
  #keysAfresh(): void {
    const present = new Set<string>();
    const ancestors = new Set<string>();
    let shared = 0;
    for (const entry of this.#parsed.values()) {
      if (present.has(entry.encodedKey)) shared++;
      present.add(entry.encodedKey);
      if (entry.encodedKey.includes(KEY_SEPARATOR)) addAncestors(entry.encodedKey, ancestors);
    }
    this.#present = present;
    this.#ancestors = ancestors;
    this.#sharedKeys = shared;
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
   * is read with the entry, see `entryRead`).
   */
  insertFromEvent(entry: EntryName, continuous: boolean): boolean {
    if (this.#readNo < 0) return false;
    if (this.#parsed.has(entry.name) || this.#gone.has(entry.name)) return false;
    this.#parsed.set(entry.name, entry);
    if (this.#present.has(entry.encodedKey)) this.#sharedKeys++;
    this.#present.add(entry.encodedKey);
    if (entry.encodedKey.includes(KEY_SEPARATOR)) addAncestors(entry.encodedKey, this.#ancestors);
    // Most new entries go last (FIFO within a priority): search from the end.
    const entries = this.#entries;
    let at = entries.length;
    while (at > 0 && byClaimOrder(entries[at - 1]!, entry) > 0) at--;
    entries.splice(at, 0, entry);
    this.#changes++;
    if (continuous) this.#eventBorn.add(entry.name);
    return true;
  }

  /**
   * This process completed the task `key` (encoded), whose entry `name` its completion
   * deleted. A listing read before that still shows the entry, blocking the task's listed
   * descendants until the bucket's next read: it is taken out, so a child waiting on it is a
   * candidate at once, and a claim for it is due (`childReady`). A listing in flight may show
   * the entry too: the name is remembered until a listing without it. Returns whether the
   * listing shows a child of it.
   */
  completedHere(key: string, name: string): boolean {
    this.#cache.delete(name);
    const listedChild = this.#ancestors.has(key);
    // Neither the listing nor a read in flight shows the entry: nothing to take out.
    const shown = this.#parsed.has(name);
    if (!shown && this.#listing === null) return listedChild;
    // Not a candidate any more (its entry is gone: reading it would find nothing).
    this.#gone.add(name);
    if (!shown) return listedChild;
    // The listing shows this very entry, so the task's key in it is this entry's.
    this.#present.delete(key);
    if (listedChild) this.#childReady = true;
    return listedChild;
  }

  /**
   * What a read of entry `name` found (`firstSeen`: when this claimer first saw it): its data,
   * or `null` when it is gone (stale, and no candidate until a listing without it: none will
   * show it again) or bad (skipped while listed: claiming it is impossible, and failing the
   * whole claim on it would stop every other task in the bucket).
   */
  entryRead(name: string, read: EntryRead, firstSeen: number): CachedEntry | null {
    if (read === 'gone') {
      this.#stale = true;
      this.#gone.add(name);
      return null;
    }
    if (read === 'bad') {
      this.#bad.add(name);
      return null;
    }
    // The read is a fresh object of the cached entry's shape: cached as it is, not copied.
    read.firstSeen = firstSeen;
    const cached: CachedEntry = read;
    this.#cache.set(name, cached);
    // Reported in order since the listing: every entry created before it is in the view, so a
    // child's ancestor changed up to its creation cannot hide a re-queue (see ancestorGuards).
    if (this.#eventBorn.has(name) && read.czxid > this.#pzxid) this.#pzxid = read.czxid;
    return cached;
  }

  /**
   * This process claimed `entry` (read as `cached`): not a candidate any more, but it still
   * blocks its descendants (`present`) until a fresh listing shows it gone. The cache
   * remembers it as claimed, so a listing read before its completion does not make this
   * claimer read a deleted entry.
   */
  claimedHere(entry: EntryName, cached: CachedEntry): void {
    this.#cache.set(entry.name, { ...cached, claimed: true });
    // In place: claims come from the head of the listing, so the search is short, and a
    // copy of a big bucket's listing per claim was the worker's largest source of garbage.
    const at = this.#entries.indexOf(entry);
    if (at >= 0) {
      this.#entries.splice(at, 1);
      // The listing still knows it: the next one puts it back if it still shows it.
      this.#spliced.push(entry);
    }
  }

  /** A claim of entry `name` was refused for the entry itself: it is read again. */
  forgetEntry(name: string): void {
    this.#cache.delete(name);
    this.#stale = true;
  }

  /** A claim's ancestor check was refused: no stat older than the refusal is used again. */
  guardRefused(): void {
    this.#guardStats.clear();
    this.#stale = true;
  }

  /** The stat of ancestor `id` (encoded) read for a guard, if any (see `ancestorGuards`). */
  guardStat(id: string): AncestorStat | undefined {
    return this.#guardStats.get(id);
  }

  rememberGuard(id: string, stat: AncestorStat): void {
    this.#guardStats.set(id, stat);
  }

  /**
   * A child of a task this process completed waits here: read up to date before the next
   * claim chooses (see `unblockDue`).
   */
  expectChild(): void {
    this.#unblockPending = true;
    this.relistAtNextUse();
  }

  /** A claim call starts from this listing: a ready child is its to claim now. */
  claimCallStarted(): void {
    this.#childReady = false;
  }

  /**
   * Whether this bucket must be read up to date before the next claim chooses: a child is
   * expected, or a claim of this process (`held` no longer) that blocked listed entries has
   * been settled since. It stays due until `readSinceDone`.
   */
  unblockDue(held: ReadonlySet<string>): boolean {
    if (this.#unblockedSince(held)) this.#unblockPending = true;
    return this.#unblockPending;
  }

  /** A listing read after the settle that made a claim due is in. */
  readSinceDone(): void {
    this.#unblockPending = false;
  }

  #unblockedSince(held: ReadonlySet<string>): boolean {
    if (this.#ancestors.size === 0) return false;
    for (const [name, cached] of this.#cache) {
      if (!cached.claimed) continue;
      const key = this.#parsed.get(name)?.encodedKey;
      if (key !== undefined && !held.has(key) && this.#ancestors.has(key)) return true;
    }
    return false;
  }

  /** Names of entries claimed here whose claims this process (`held`) no longer holds. */
  settledClaims(held: ReadonlySet<string>): string[] {
    const out: string[] = [];
    for (const [name, cached] of this.#cache) {
      if (!cached.claimed) continue;
      const key = this.#parsed.get(name)?.encodedKey;
      if (key !== undefined && !held.has(key)) out.push(name);
    }
    return out;
  }

  /**
   * A listed entry that a claim could take if it is runnable: its data (`null` when not read
   * yet), or `undefined` when it is no candidate at all (dead, held here, busy elsewhere, gone,
   * bad, or claimed here).
   */
  openEntry(
    entry: EntryName,
    held: ReadonlySet<string>,
    busy: ReadonlySet<string>,
  ): CachedEntry | null | undefined {
    if (entry.kind === ENTRY_KIND.dead || held.has(entry.encodedKey) || busy.has(entry.encodedKey))
      return undefined;
    if (this.#gone.has(entry.name) || this.#bad.has(entry.name)) return undefined;
    const cached = this.#cache.get(entry.name);
    if (cached?.claimed) return undefined;
    return cached ?? null;
  }

  /**
   * Whether a proper ancestor of `key` (encoded) other than `except` is listed here (it blocks
   * the task).
   */
  hasListedAncestor(key: string, except?: string): boolean {
    const present = this.#present;
    for (let i = key.indexOf(KEY_SEPARATOR); i > 0; i = key.indexOf(KEY_SEPARATOR, i + 1)) {
      const ancestor = key.slice(0, i);
      if (ancestor !== except && present.has(ancestor)) return true;
    }
    return false;
  }
}

/** Adds every proper ancestor of `key` (encoded) to `into`. */
function addAncestors(key: string, into: Set<string>): void {
  for (let i = key.lastIndexOf(KEY_SEPARATOR); i > 0; i = key.lastIndexOf(KEY_SEPARATOR, i - 1)) {
    const parent = key.slice(0, i);
    // Its own ancestors went in with it.
    if (into.has(parent)) return;
    into.add(parent);
  }
}
