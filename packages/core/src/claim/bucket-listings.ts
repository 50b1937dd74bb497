import type { EngineContext } from '../engine/context.js';
import { AREA, ENTRY_KIND, type EntryName } from '../engine/layout.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import {
  applyListing,
  type BucketState,
  type CachedEntry,
  emptyBucket,
  hasListedAncestor,
  settledClaims,
} from './bucket-state.js';
import { type EntryRead, readEntryNode } from './entry-read.js';
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

/** What `deleting` returns for a bucket no tree watch covers: a completion per call, no closure. */
const NOTHING_TO_END = (_applied: boolean): void => {};

/**
 * Whether an entry not read yet may come before a candidate of priority `bar`: a higher
 * priority, or a child of the same priority (runnable only now, queued before the roots
 * that were waiting behind it).
 */
export function outranks(e: EntryName, bar: number): boolean {
  return e.priority > bar || (e.priority === bar && e.encodedKey.includes(KEY_SEPARATOR));
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
  /** Listings and entry reads sent so far: what an idle steal pass spent. */
  requests = 0;
  /** Listings sent so far; each bucket remembers the number of its last one. */
  private readsStarted = 0;
  /** Counts claim calls, so a call reads an unwatched bucket only once. */
  private callSeq = 0;
  /** `<bucket>/<name>` of entries whose deletion an own completion has out (see `deleting`). */
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
  markStale(bucket: number): void {
    const st = this.buckets.get(bucket);
    if (st) st.stale = true;
    // A claim elsewhere ended without a change of the listing (its session died): a steal
    // pass must look at the bucket again.
    this.scouts.delete(bucket);
  }

  /** The buckets whose listings are cached and watched (kept up to date by their watches). */
  get watchedBuckets(): ReadonlySet<number> {
    return this.watched;
  }

  /** Buckets whose listings are cached and watched; all others are listed on every use. */
  setWatched(buckets: Iterable<number>): void {
    const before = new Set(this.watched);
    this.watched.clear();
    for (const b of buckets) this.watched.add(b);
    for (const [b, st] of [...this.buckets]) {
      if (!this.watched.has(b)) this.drop(b, st);
      // A bucket listed while unwatched (an idle steal scan) has no watch and would never be
      // marked stale: re-list it, with a watch, on its next use.
      else if (!before.has(b)) {
        st.stale = true;
        st.listedAt = Number.NEGATIVE_INFINITY;
      }
    }
  }

  /** Stops reacting to watches. */
  close(): void {
    this.closed = true;
  }

  /** Makes the next claim re-read a bucket (after a claim was given back, say). */
  touch(bucket: number): void {
    const st = this.buckets.get(bucket);
    if (!st) return;
    st.stale = true;
    st.listedAt = Number.NEGATIVE_INFINITY;
    for (const [name, cached] of st.cache) if (cached.claimed) st.cache.delete(name);
  }

  /** Something changed in `bucket` its listing may not show: as when a children watch fires. */
  changed(bucket: number): void {
    this.fire(this.buckets.get(bucket));
  }

  private fire(st: BucketState | undefined): void {
    if (st) {
      st.stale = true;
      st.changes++;
    }
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
    if (!this.ownDeletes.has(`${bucket}/${name}`)) this.changed(bucket);
  }

  /**
   * An own completion is about to delete entry `name` of `bucket`; `end` when it has settled
   * (`applied`: the entry is gone by this completion). A refused or unknown completion may
   * have hidden another's deletion of the same entry: that bucket counts as changed.
   */
  deleting(bucket: number, name: string): (applied: boolean) => void {
    // Not covered: nothing to tell apart (a watch set meanwhile costs one re-read, no more).
    if (this.opts.eventFed?.(bucket) !== true) return NOTHING_TO_END;
    const id = `${bucket}/${name}`;
    this.ownDeletes.add(id);
    return (applied) => {
      this.ownDeletes.delete(id);
      if (!applied) this.changed(bucket);
    };
  }

  /** Forgets every listing (after a session change, when watches may be gone). */
  clear(): void {
    this.buckets.clear();
    this.scouts.clear();
  }

  /** Whether a settled claim of this process may have made a listed entry of `buckets` runnable. */
  unblockedIn(buckets: readonly number[]): boolean {
    for (const b of buckets) {
      const st = this.buckets.get(b);
      if (st !== undefined && this.watched.has(b) && (st.childReady || this.unblocking(st)))
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
  mayHideChildOf(bucket: number, key: string): boolean {
    const st = this.buckets.get(bucket);
    if (st === undefined || !this.watched.has(bucket) || st.ancestors.has(key)) return false;
    if (st.entries.length < PLENTY_LOOKAHEADS * this.lookahead) return false;
    return st.stale || st.changes !== st.listedChanges;
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
    usable: (e: EntryName, cached: CachedEntry | undefined) => boolean,
  ): boolean {
    for (const b of buckets) {
      const st = this.buckets.get(b);
      if (st === undefined || !this.watched.has(b)) continue;
      for (const e of st.entries) {
        if (e.priority <= priority) break;
        if (e.kind === ENTRY_KIND.dead || this.held.has(e.encodedKey)) continue;
        if (st.gone.has(e.name) || st.bad.has(e.name)) continue;
        if (hasListedAncestor(e.encodedKey, st.present)) continue;
        const cached = st.cache.get(e.name);
        // Not read yet (`cached` undefined): the claim call reads it, once.
        if (!cached?.claimed && usable(e, cached)) return true;
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
  completed(bucket: number, key: string, name: string): boolean {
    const st = this.buckets.get(bucket);
    if (st === undefined) return false;
    st.cache.delete(name);
    const listedChild = st.ancestors.has(key);
    // Neither the listing nor a read in flight shows the entry: nothing to take out.
    const shown = st.parsed.has(name);
    if (!shown && st.listing === null) return listedChild;
    // Not a candidate any more (its entry is gone: reading it would find nothing).
    st.gone.add(name);
    if (!shown) return listedChild;
    // The listing shows this very entry, so the task's key in it is this entry's.
    st.present.delete(key);
    if (listedChild) st.childReady = true;
    return listedChild;
  }

  /**
   * A child of a task this process completed waits in `bucket` (its parent's tree node has
   * children): read the bucket up to date before the next claim chooses, and claim now.
   */
  expectChild(bucket: number): void {
    const st = this.buckets.get(bucket);
    if (st === undefined) return;
    st.unblockPending = true;
    st.stale = true;
    st.listedAt = Number.NEGATIVE_INFINITY;
    if (!this.closed) this.onChange();
  }

  /** Whether this bucket must be read up to date before the next claim chooses. */
  private unblocking(st: BucketState): boolean {
    if (this.unblockedSince(st)) st.unblockPending = true;
    return st.unblockPending;
  }

  /** Whether a claim of this process that blocked other listed entries has been settled. */
  private unblockedSince(st: BucketState): boolean {
    if (st.ancestors.size === 0) return false;
    for (const [name, cached] of st.cache) {
      if (!cached.claimed) continue;
      const key = st.parsed.get(name)?.encodedKey;
      if (key !== undefined && !this.held.has(key) && st.ancestors.has(key)) return true;
    }
    return false;
  }

  /**
   * Starts one claim call over `buckets`. Listings of buckets this claimer does not watch are
   * read afresh per call (they get no watch); only those asked for now are kept, so a
   * stolen-from bucket does not stay in memory.
   */
  beginCall(buckets: readonly number[]): void {
    // Deleting the entry being visited is safe in a Map's iteration: no copy per claim call.
    for (const [b, st] of this.buckets)
      if (!this.watched.has(b) && !buckets.includes(b)) this.drop(b, st);
    this.callSeq++;
  }

  private drop(b: number, st: BucketState): void {
    this.sights.keep(b, st.cache);
    this.buckets.delete(b);
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
    const unblocked = buckets.filter((b) => {
      const st = this.buckets.get(b);
      if (st) st.childReady = false;
      return st !== undefined && this.watched.has(b) && this.unblocking(st);
    });
    for (const b of buckets) {
      const st = this.buckets.get(b);
      const unusable = !st || !this.watched.has(b) || st.entries.length === 0;
      // A listing in flight was started after the last change seen: wait for it when needed.
      if (st?.listing) {
        if (unusable || eager) waits.push(st.listing);
        continue;
      }
      if (st && this.watched.has(b) && !st.stale) continue;
      // An unwatched bucket is read once per call, not again in the call's later rounds.
      if (st && !this.watched.has(b) && st.listedIn === this.callSeq) continue;
      // While a cached listing still offers plenty of work, re-read it only every `relistMs`:
      // under load every completion fires the watch, and re-reading a big bucket per task
      // would cost more than the task. A listing running low is re-read at once.
      // A listing costs in proportion to its size, so a big bucket waits 1 ms per entry.
      const size = st?.entries.length ?? 0;
      const plenty = size >= PLENTY_LOOKAHEADS * this.lookahead;
      const spacing = Math.max(this.opts.relistMs ?? DEFAULT_RELIST_MS, size);
      if (!unusable && !eager && plenty && now - (st?.listedAt ?? 0) < spacing) continue;
      const p = this.list(b);
      if (unusable || eager) waits.push(p);
      else p.catch(() => undefined);
    }
    await Promise.all(waits);
    await Promise.all(unblocked.map((b) => this.readSince(b, firstFresh)));
  }

  /**
   * Waits for a listing of `b` read after read number `firstFresh` went out, reading one if
   * needed: it shows what the settle changed. It need not be up to date with every change
   * event: a child's claim checks its ancestors whatever listing it comes from (see
   * `ancestorGuards`).
   */
  private async readSince(b: number, firstFresh: number): Promise<void> {
    const st = this.buckets.get(b);
    if (!st) return;
    if (st.readNo < firstFresh || st.listing) await (st.listing ?? this.list(b));
    if (st.readNo < firstFresh) await this.list(b);
    st.unblockPending = false;
  }

  private list(b: number): Promise<void> {
    const p = this.readListing(b).finally(() => {
      const st = this.buckets.get(b);
      if (st?.listing === p) st.listing = null;
    });
    const st = this.buckets.get(b);
    if (st) st.listing = p;
    return p;
  }

  private async readListing(b: number): Promise<void> {
    let st = this.buckets.get(b);
    if (!st) {
      st = emptyBucket();
      this.buckets.set(b, st);
    }
    const state = st;
    state.stale = false;
    // Counted before the read goes out: a change whose event arrives later is not in it.
    const changesBefore = state.changes;
    state.listedAt = this.ctx.clock.now();
    state.listedIn = this.callSeq;
    const owned = this.watched.has(b);
    // A bucket whose changes a tree watch reports needs no children watch.
    const wantWatch = owned && !state.watchArmed && this.opts.eventFed?.(b) !== true;
    if (wantWatch) state.watchArmed = true;
    // A bucket listed by a steal pass keeps a children watch (not its listing), so the next
    // pass re-reads only buckets that changed: idle workers stay quiet in a quiet world.
    // Only a bounded few per bucket do (`scoutWatch`), or each change would wake them all.
    const wantScout = !owned && !this.scouts.has(b) && this.opts.scoutWatch?.(b) !== false;
    if (wantScout) this.scouts.add(b);
    // Own claims settled before this read went out: the read shows what became of them.
    const settled = settledClaims(state, this.held);
    let names: string[];
    let pzxid: number;
    this.requests++;
    state.readNo = this.readsStarted++;
    try {
      const listed = await this.ctx.coordinator.childrenWithStat(
        this.ctx.layout.bucketPath(AREA.pending, b),
        wantWatch
          ? {
              watch: () => {
                state.watchArmed = false;
                this.fire(state);
              },
            }
          : wantScout
            ? { watch: () => this.scoutFired(b) }
            : undefined,
      );
      names = listed.children;
      pzxid = listed.stat.pzxid;
    } catch (err) {
      if (wantWatch) state.watchArmed = false;
      if (wantScout) this.scouts.delete(b);
      state.stale = true;
      throw err;
    }
    const behind = applyListing(state, names, pzxid, changesBefore, settled);
    this.sights.prune(b, state.parsed);
    // Behind an own completion, with a listed child of it: claimed now.
    if (behind && state.childReady && !this.closed) this.onChange();
  }

  private scoutFired(b: number): void {
    this.scouts.delete(b);
    if (!this.closed) this.opts.onForeignChange?.(b);
  }

  /** Reads an entry once, however many claims ask for it while the read is in flight. */
  fetch(b: number, st: BucketState, e: EntryName): Promise<CachedEntry | null> {
    const inFlight = st.fetching.get(e.name);
    if (inFlight) return inFlight;
    // readEntry drops it from `fetching` when the read ends (no `finally` promise per read).
    const p = this.readEntry(b, st, e);
    st.fetching.set(e.name, p);
    return p;
  }

  private async readEntry(b: number, st: BucketState, e: EntryName): Promise<CachedEntry | null> {
    this.requests++;
    const path = `${this.ctx.layout.bucketPath(AREA.pending, b)}/${e.name}`;
    let read: EntryRead;
    try {
      read = await readEntryNode(this.ctx, path);
    } finally {
      st.fetching.delete(e.name);
    }
    // Gone: no candidate until a listing without it (none will show it again).
    if (read === 'gone') {
      st.stale = true;
      st.gone.add(e.name);
    }
    // A foreign node named like an entry: claiming it is impossible, and failing the whole
    // claim on it would stop every other task in the bucket. Skip it while it is listed.
    else if (read === 'bad') st.bad.add(e.name);
    if (typeof read === 'string') return null;
    const firstSeen = this.sights.of(b, e.name, this.ctx.clock.now());
    const cached: CachedEntry = { ...read, firstSeen };
    st.cache.set(e.name, cached);
    // Reported in order since the listing: every entry created before it is in the view, so a
    // child's ancestor changed up to its creation cannot hide a re-queue (see ancestorGuards).
    if (st.eventBorn.has(e.name) && read.czxid > st.pzxid) st.pzxid = read.czxid;
    return cached;
  }
}
