import type { EngineContext } from '../engine/context.js';
import { AREA, ENTRY_KIND, type EntryName } from '../engine/layout.js';
import { scanEndsAt } from '../tree/claim-order.js';
import { BucketState, type CachedEntry } from './bucket-state.js';
import { type EntryRead, entryOfNode, readFailed } from './entry-read.js';
import { FirstSights } from './first-sights.js';

export type { BucketState, CachedEntry } from './bucket-state.js';

/** Runnable entries per bucket whose data is read ahead and ordered, unless told otherwise. */
export const DEFAULT_LOOKAHEAD = 16;
/** Longest time a changed bucket that still offers plenty of work is served from its listing. */
export const DEFAULT_RELIST_MS = 500;
/**
 * A listing "offers plenty of work" while it holds this many lookaheads of entries; below
 * that, a changed bucket is re-read at once.
 */
const PLENTY_LOOKAHEADS = 2;

/** What the listings need to know of the claimer's options. */
export interface ListingOptions {
  lookahead?: number;
  relistMs?: number;
  /**
   * Called when a bucket this claimer does not own, listed by an idle steal pass, changes:
   * the children watch that pass left on it fired.
   */
  onForeignChange?: (bucket: number) => void;
  /** Whether a steal pass's listing of `bucket` (not owned) leaves that watch; default yes. */
  scoutWatch?: (bucket: number) => boolean;
  /**
   * Whether a tree watch reports every change of `bucket`'s entries from now on (see
   * `EntryEvents.covers`): its listing then needs no children watch. The watch's events take
   * its place (`changed`, `wake`, `entryDeleted`), and an own completion's deletion is told
   * from a foreign one by name (`deleting`), so it costs no re-listing.
   */
  eventFed?: (bucket: number) => boolean;
}

/**
 * The listings of pending buckets one claimer works from. Listings of watched buckets are
 * cached and re-read only after their children watch fired; entry data is read once per
 * entry name (a changed entry is renamed), so a steady stream of claims costs about one read
 * per task on top of the claim write.
 */
export class BucketListings {
  private readonly buckets = new Map<number, BucketState>();
  private readonly watched = new Set<number>();
  /**
   * Buckets not owned here whose children watch, left by a steal pass's listing, has not
   * fired: nothing was queued or removed there since that listing.
   */
  private readonly scouts = new Set<number>();
  /** First sights of hinted entries whose listings were dropped (locality waits run on). */
  private readonly sights = new FirstSights();
  private closed = false;
  /** Pending buckets' paths by number: made once, not per entry read and claim. */
  private readonly paths = new Map<number, string>();
  /** Listings and entry reads sent so far: what an idle steal pass spent. */
  requests = 0;
  /** Listings sent so far; each bucket remembers the number of its last one. */
  private readsStarted = 0;
  /** Counts claim calls, so a call reads an unwatched bucket only once. */
  private callSeq = 0;
  /**
   * Names of entries whose deletion an own completion has out (see `deleting`). A name is
   * one bucket's: it carries the task's key, which the bucket is worked out from.
   */
  private readonly ownDeletes = new Set<string>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly opts: ListingOptions,
    /** Keys held by this process (claimed, not yet settled). */
    private readonly held: ReadonlySet<string>,
    /** Called when a watch says something changed: an idle worker wakes up. */
    private readonly onChange: () => void,
  ) {}

  /** Whether `bucket` (not owned here) is unchanged since a steal pass listed it. */
  scouted(bucket: number): boolean {
    return this.scouts.has(bucket);
  }

  /** The path of pending bucket `bucketNo`. */
  pendingPath(bucketNo: number): string {
    let path = this.paths.get(bucketNo);
    if (path === undefined) {
      path = this.ctx.layout.bucketPath(AREA.pending, bucketNo);
      this.paths.set(bucketNo, path);
    }
    return path;
  }

  /** The number the next listing read will get (see `BucketState.readNo`). */
  get nextReadNo(): number {
    return this.readsStarted;
  }

  /** Runnable entries per bucket whose data is read ahead. */
  get lookahead(): number {
    return this.opts.lookahead ?? DEFAULT_LOOKAHEAD;
  }

  /** The cached listing of `bucket`, if any. */
  get(bucket: number): BucketState | undefined {
    return this.buckets.get(bucket);
  }

  /** Marks a bucket's listing out of date, so its next use re-reads it. */
  markStale(bucketNo: number): void {
    this.buckets.get(bucketNo)?.markStale();
    // A claim elsewhere ended without a change of the listing (its session died): a steal
    // pass must look at the bucket again.
    this.scouts.delete(bucketNo);
  }

  /** The buckets whose listings are cached and watched (kept up to date by their watches). */
  get watchedBuckets(): ReadonlySet<number> {
    return this.watched;
  }

  /** Buckets whose listings are cached and watched; all others are listed on every use. */
  setWatched(buckets: Iterable<number>): void {
    const before = new Set(this.watched);
    this.watched.clear();
    for (const bucketNo of buckets) this.watched.add(bucketNo);
    for (const [bucketNo, bucket] of [...this.buckets]) {
      if (!this.watched.has(bucketNo)) this.drop(bucketNo, bucket);
      // A bucket listed while unwatched (an idle steal scan) has no watch and would never be
      // marked stale: re-list it, with a watch, on its next use.
      else if (!before.has(bucketNo)) bucket.relistAtNextUse();
    }
  }

  /** Stops reacting to watches. */
  close(): void {
    this.closed = true;
  }

  /** Makes the next claim re-read a bucket (after a claim was given back, say). */
  touch(bucketNo: number): void {
    this.buckets.get(bucketNo)?.touch();
  }

  /** Something changed in `bucket` its listing may not show: as when a children watch fires. */
  changed(bucketNo: number): void {
    this.buckets.get(bucketNo)?.changed();
    this.wake();
  }

  /** Something worth a claim call happened that changes no listing (a new entry joined one). */
  wake(): void {
    if (!this.closed) this.onChange();
  }

  /**
   * A tree watch reports entry `name` of `bucket` deleted: a change, unless an own completion
   * in flight deleted it (`completed` takes it out of the listing once the reply is in).
   */
  entryDeleted(bucket: number, name: string): void {
    if (!this.ownDeletes.has(name)) this.changed(bucket);
  }

  /**
   * An own completion is about to delete the entry at `entryPath` in `bucket`;
   * `deleteSettled` when it has settled. Called for every completion: nothing is made for a
   * bucket no tree watch covers.
   */
  deleting(bucket: number, entryPath: string): void {
    // Not covered: nothing to tell apart (a watch set meanwhile costs one re-read, no more).
    if (this.opts.eventFed?.(bucket) !== true) return;
    this.ownDeletes.add(entryNameOf(entryPath));
  }

  /**
   * The completion that was deleting the entry at `entryPath` in `bucket` has settled
   * (`applied`: the entry is gone by it). A refused or unknown completion may have hidden
   * another's deletion of the same entry: that bucket counts as changed.
   */
  deleteSettled(bucket: number, entryPath: string, applied: boolean): void {
    // Nothing out (every completion of an uncovered bucket): no name to work out.
    if (this.ownDeletes.size === 0 || !this.ownDeletes.delete(entryNameOf(entryPath))) return;
    if (!applied) this.changed(bucket);
  }

  /** Forgets every listing (after a session change, when watches may be gone). */
  clear(): void {
    this.buckets.clear();
    this.scouts.clear();
  }

  /** Whether a settled claim of this process may have made a listed entry of `buckets` runnable. */
  unblockedIn(buckets: readonly number[]): boolean {
    for (const bucketNo of buckets) {
      const bucket = this.buckets.get(bucketNo);
      if (
        bucket !== undefined &&
        this.watched.has(bucketNo) &&
        (bucket.childReady || bucket.unblockDue(this.held))
      )
        return true;
    }
    return false;
  }

  /**
   * Whether the cached listing of `bucket` may lack a child of `key` (encoded) that became
   * runnable when this process completed `key`, for long: the listing shows no child of it
   * (a listed child is found by `unblockedIn`), the bucket changed since it was read (a child
   * may have been queued meanwhile: a child's entry lives in its parent's bucket), and the
   * listing holds plenty of work, so it would be served for up to `relistMs` more. A smaller
   * listing is re-read as soon as the next claim call starts; asking for those would cost a
   * read per completion of every sequential worker (its own delete changes the bucket too).
   */
  mayHideChildOf(bucketNo: number, key: string): boolean {
    const bucket = this.buckets.get(bucketNo);
    if (bucket === undefined || !this.watched.has(bucketNo) || bucket.ancestors.has(key))
      return false;
    if (bucket.entries.length < PLENTY_LOOKAHEADS * this.lookahead) return false;
    return bucket.changedSinceListing();
  }

  /**
   * Whether a watched listing of `buckets` shows an entry of a priority above `priority`
   * that nothing here holds or blocks and, once read, that `usable` accepts (its type
   * served, not delayed): work that should not wait for a batch of free slots. Entries are
   * in claim order, so a bucket is scanned only down to that priority.
   */
  knownWorkAbove(
    buckets: readonly number[],
    priority: number,
    usable: (entry: EntryName, cached: CachedEntry | undefined) => boolean,
  ): boolean {
    for (const bucketNo of buckets) {
      const bucket = this.buckets.get(bucketNo);
      if (bucket === undefined || !this.watched.has(bucketNo)) continue;
      for (const entry of bucket.entries) {
        if (scanEndsAt(entry.priority, priority)) break;
        if (entry.kind === ENTRY_KIND.dead || this.held.has(entry.encodedKey)) continue;
        if (bucket.gone.has(entry.name) || bucket.bad.has(entry.name)) continue;
        if (bucket.hasListedAncestor(entry.encodedKey)) continue;
        const cached = bucket.cache.get(entry.name);
        // Not read yet (`cached` undefined): the claim call reads it, once.
        if (!cached?.claimed && usable(entry, cached)) return true;
      }
    }
    return false;
  }

  /**
   * This process completed the task `key` (encoded), whose entry `name` in `bucket` its
   * completion deleted. A listing read before that still shows the entry, blocking the task's
   * listed descendants until the bucket's next read: it is taken out, so a child waiting on it
   * is a candidate at once, and a claim for it is due (`childReady`). Its claim checks its
   * ancestors, as every child's does (see `ancestorGuards`): an ancestor queued again since
   * makes it wait or fail, never run early. A listing in flight may show the entry too: the
   * name is remembered until a listing without it. Returns whether the listing shows a child
   * of it.
   */
  completed(bucketNo: number, key: string, name: string): boolean {
    return this.buckets.get(bucketNo)?.completedHere(key, name) ?? false;
  }

  /**
   * A child of a task this process completed waits in `bucket` (its parent's tree node has
   * children): read the bucket up to date before the next claim chooses, and claim now.
   */
  expectChild(bucketNo: number): void {
    const bucket = this.buckets.get(bucketNo);
    if (bucket === undefined) return;
    bucket.expectChild();
    if (!this.closed) this.onChange();
  }

  /**
   * Starts one claim call over `buckets`. Listings of buckets this claimer does not watch are
   * read afresh per call (they get no watch); only those asked for now are kept, so a
   * stolen-from bucket does not stay in memory.
   */
  beginCall(buckets: readonly number[]): void {
    // Deleting the entry being visited is safe in a Map's iteration: no copy per claim call.
    for (const [bucketNo, bucket] of this.buckets)
      if (!this.watched.has(bucketNo) && !buckets.includes(bucketNo)) this.drop(bucketNo, bucket);
    this.callSeq++;
  }

  private drop(bucketNo: number, bucket: BucketState): void {
    this.sights.keep(bucketNo, bucket.cache);
    this.buckets.delete(bucketNo);
  }

  /**
   * Re-lists the buckets that need it. `eager` waits for every stale bucket; otherwise only
   * for buckets without a usable listing, and the others are re-read in the background while
   * this claim works from the cached listing. A stale listing never lets a task run early
   * (see docs/protocol.md); it only shows new work a little later.
   */
  async refresh(buckets: readonly number[], eager: boolean): Promise<void> {
    const waits: Promise<void>[] = [];
    const now = this.ctx.clock.now();
    // A claim of this process that blocked other listed entries has settled since its bucket
    // was read: its completion may have made a child runnable, which must be chosen by its
    // priority now, not after the cached listing's next re-read. Such a bucket is read again
    // (a read that went out from here on, so after the settle) before this claim chooses.
    const firstFresh = this.readsStarted;
    const unblocked = buckets.filter((bucketNo) => {
      const bucket = this.buckets.get(bucketNo);
      bucket?.claimCallStarted();
      return bucket !== undefined && this.watched.has(bucketNo) && bucket.unblockDue(this.held);
    });
    for (const bucketNo of buckets) {
      const bucket = this.buckets.get(bucketNo);
      const watched = this.watched.has(bucketNo);
      const unusable = !bucket || !watched || bucket.entries.length === 0;
      // A listing in flight was started after the last change seen: wait for it when needed.
      if (bucket?.listing) {
        if (unusable || eager) waits.push(bucket.listing);
        continue;
      }
      if (bucket && watched && !bucket.stale) continue;
      // An unwatched bucket is read once per call, not again in the call's later rounds.
      if (bucket && !watched && bucket.listedIn === this.callSeq) continue;
      // While a cached listing still offers plenty of work, re-read it only every `relistMs`:
      // under load every completion fires the watch, and re-reading a big bucket per task
      // would cost more than the task. A listing running low is re-read at once.
      // A listing costs in proportion to its size, so a big bucket waits 1 ms per entry.
      const size = bucket?.entries.length ?? 0;
      const plenty = size >= PLENTY_LOOKAHEADS * this.lookahead;
      const spacing = Math.max(this.opts.relistMs ?? DEFAULT_RELIST_MS, size);
      if (!unusable && !eager && plenty && now - (bucket?.listedAt ?? 0) < spacing) continue;
      const listing = this.list(bucketNo);
      if (unusable || eager) waits.push(listing);
      else listing.catch(() => undefined);
    }
    await Promise.all(waits);
    await Promise.all(unblocked.map((bucketNo) => this.readSince(bucketNo, firstFresh)));
  }

  /**
   * Waits for a listing of `b` read after read number `firstFresh` went out, reading one if
   * needed: it shows what the settle changed. It need not be up to date with every change
   * event: a child's claim checks its ancestors whatever listing it comes from (see
   * `ancestorGuards`).
   */
  private async readSince(bucketNo: number, firstFresh: number): Promise<void> {
    const bucket = this.buckets.get(bucketNo);
    if (!bucket) return;
    if (bucket.readNo < firstFresh || bucket.listing) await (bucket.listing ?? this.list(bucketNo));
    if (bucket.readNo < firstFresh) await this.list(bucketNo);
    bucket.readSinceDone();
  }

  private list(bucketNo: number): Promise<void> {
    const listing: Promise<void> = this.readListing(bucketNo).finally(() =>
      this.buckets.get(bucketNo)?.listingEnded(listing),
    );
    this.buckets.get(bucketNo)?.listingStarted(listing);
    return listing;
  }

  private async readListing(bucketNo: number): Promise<void> {
    let bucket = this.buckets.get(bucketNo);
    if (!bucket) {
      bucket = BucketState.unlisted();
      this.buckets.set(bucketNo, bucket);
    }
    const state = bucket;
    const owned = this.watched.has(bucketNo);
    // A bucket whose changes a tree watch reports needs no children watch.
    const wantWatch = owned && !state.watchArmed && this.opts.eventFed?.(bucketNo) !== true;
    if (wantWatch) state.armWatch();
    // A bucket listed by a steal pass keeps a children watch (not its listing), so the next
    // pass re-reads only buckets that changed: idle workers stay quiet in a quiet world.
    // Only a bounded few per bucket do (`scoutWatch`), or each change would wake them all.
    const wantScout =
      !owned && !this.scouts.has(bucketNo) && this.opts.scoutWatch?.(bucketNo) !== false;
    if (wantScout) this.scouts.add(bucketNo);
    // Own claims settled before this read went out: the read shows what became of them.
    const settled = state.settledClaims(this.held);
    let names: string[];
    let pzxid: number;
    this.requests++;
    const changesBefore = state.beginRead(this.readsStarted++, this.callSeq, this.ctx.clock.now());
    try {
      const listed = await this.ctx.coordinator.childrenWithStat(
        this.pendingPath(bucketNo),
        wantWatch
          ? {
              watch: () => {
                state.watchFired();
                this.wake();
              },
            }
          : wantScout
            ? { watch: () => this.scoutFired(bucketNo) }
            : undefined,
      );
      names = listed.children;
      pzxid = listed.stat.pzxid;
    } catch (err) {
      if (wantScout) this.scouts.delete(bucketNo);
      state.readFailed(wantWatch);
      throw err;
    }
    const behind = state.applyListing(names, pzxid, changesBefore, settled);
    this.sights.prune(bucketNo, state.parsed);
    // Behind an own completion, with a listed child of it: claimed now.
    if (behind && state.childReady && !this.closed) this.onChange();
  }

  private scoutFired(bucketNo: number): void {
    this.scouts.delete(bucketNo);
    if (!this.closed) this.opts.onForeignChange?.(bucketNo);
  }

  /** Reads an entry once, however many claims ask for it while the read is in flight. */
  fetch(bucketNo: number, bucket: BucketState, entry: EntryName): Promise<CachedEntry | null> {
    const inFlight = bucket.fetching(entry.name);
    if (inFlight) return inFlight;
    // readEntry ends the fetch when the read ends (no `finally` promise per read).
    const read = this.readEntry(bucketNo, bucket, entry);
    bucket.fetchStarted(entry.name, read);
    return read;
  }

  private async readEntry(
    bucketNo: number,
    bucket: BucketState,
    entry: EntryName,
  ): Promise<CachedEntry | null> {
    this.requests++;
    const path = `${this.pendingPath(bucketNo)}/${entry.name}`;
    let read: EntryRead;
    // The read awaited here, not in a function of its own: one async layer per entry read.
    try {
      read = entryOfNode(this.ctx, path, await this.ctx.coordinator.get(path));
    } catch (err) {
      read = readFailed(err);
    } finally {
      bucket.fetchEnded(entry.name);
    }
    // Only a read entry has a first sight to look up.
    const firstSeen =
      typeof read === 'string' ? 0 : this.sights.of(bucketNo, entry.name, this.ctx.clock.now());
    return bucket.entryRead(entry.name, read, firstSeen);
  }
}

/** The entry's name: the last step of its path. */
export function entryNameOf(entryPath: string): string {
  return entryPath.slice(entryPath.lastIndexOf('/') + 1);
}
