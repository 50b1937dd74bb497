import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import { AREA, ENTRY_KIND, type EntryName, parseEntryName } from '../engine/layout.js';
import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';
import type { BucketListings } from './bucket-listings.js';
import type { BucketState } from './bucket-state.js';

/** One bucket's tree watch: its stop function once registered. */
interface Registration {
  stop: (() => void) | null;
  /**
   * The first listing read sent after this watch (or its last `reset`): from such a listing
   * on, every creation in the bucket is reported after the listing's reply, in order.
   */
  validFrom: number;
}

/**
 * New entries of the buckets a claimer owns, reported the moment ZooKeeper creates them, by a
 * tree watch (`Coordinator.watchTree`, ZooKeeper 3.6+) per bucket. A children watch only says
 * "this bucket changed", so a claimer learns the name of a new entry one listing later; a
 * tree event names it. The claimer uses that to read a child queued while its parent runs
 * here, so the parent's completion can hand the slot to it.
 *
 * Once a bucket's watch is in place (`covers`), its listing needs no children watch: the
 * events mark it changed where a children watch would have fired, except for the deletions
 * of own completions (told apart by name, see `BucketListings.deleting`) and roots created
 * while the listing is complete, which only join it. A `reset` marks it changed too (events
 * of the gap may be missing). Without `watchTree` (another adapter, an older server) the
 * children watches stay as they are.
 */
export class EntryEvents {
  private readonly watches = new Map<number, Registration>();
  private closed = false;
  /** Off until `start`. */
  private started = false;
  /** The coordinator or server lacks tree watches: no more attempts. */
  private unsupported = false;
  /** A registration failed (connection lost, say): try again on the next `ensure`. */
  private failed = false;

  constructor(
    private readonly ctx: EngineContext,
    private readonly listings: BucketListings,
    /** Keys held by this process (claimed, not yet settled). */
    private readonly held: ReadonlySet<string>,
    /** Reads a child's entry and its ancestors' tree nodes now (the claimer's read-ahead). */
    private readonly readAhead: (
      bucketNo: number,
      bucket: BucketState,
      entry: EntryName,
      key: TaskKey,
    ) => void,
    /**
     * Watch only buckets whose listings are small (see {@link resize}): a big listing is
     * cheaper kept by its children watch, re-read at most every `relistMs`, than by an event
     * per create, claim and completion.
     */
    private readonly smallOnly = false,
  ) {}

  /**
   * With `smallOnly`: a watched bucket whose listing has grown to `2 × lookahead` entries
   * drops its tree watch (its listing is read again, with a children watch), and one that has
   * shrunk to `lookahead / 2` or fewer gets one. The gap between the two keeps a bucket near
   * either bound from switching back and forth. Called at the start of every claim call (a
   * listing grown by events) and at its end (a listing it read or emptied).
   */
  resize(): void {
    if (!this.smallOnly || !this.started || this.closed || this.unsupported) return;
    const high = 2 * this.listings.lookahead;
    const low = this.listings.lookahead / 2;
    for (const bucketNo of this.listings.watchedBuckets) {
      const bucket = this.listings.get(bucketNo);
      // Not listed yet: its size is unknown (a worker that starts on a full bucket must not
      // set a watch only to drop it after the first listing).
      if (bucket === undefined || bucket.readNo < 0) continue;
      const size = bucket.entries.length;
      const reg = this.watches.get(bucketNo);
      if (reg === undefined && size <= low) this.register(bucketNo);
      else if (reg !== undefined && size >= high) this.unregister(bucketNo, reg);
    }
  }

  /** Stops `b`'s tree watch; its listing is read again, with a children watch, when next used. */
  private unregister(bucketNo: number, reg: Registration): void {
    this.watches.delete(bucketNo);
    // Still registering: stopped once it is in place (see `register`).
    reg.stop?.();
    this.listings.touch(bucketNo);
  }

  /** Turns the watches on (once): those of the buckets watched now go out. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.sync();
  }

  /**
   * Watches exactly the listings' watched buckets from now on (registrations go out in the
   * background); the claimer calls it whenever those change.
   */
  sync(): void {
    if (!this.started || this.closed || this.unsupported) return;
    if (this.ctx.coordinator.watchTree === undefined) return;
    const want = this.listings.watchedBuckets;
    for (const [bucketNo, reg] of this.watches)
      if (!want.has(bucketNo)) this.unregister(bucketNo, reg);
    if (this.smallOnly) this.resize();
    else for (const bucketNo of want) if (!this.watches.has(bucketNo)) this.register(bucketNo);
  }

  /** Registers again what failed to register (cheap when nothing did). */
  ensure(): void {
    if (!this.failed) return;
    this.failed = false;
    this.sync();
  }

  /** Stops every tree watch. */
  close(): void {
    this.closed = true;
    for (const reg of this.watches.values()) reg.stop?.();
    this.watches.clear();
  }

  private register(bucketNo: number): void {
    const { coordinator } = this.ctx;
    const path = this.ctx.layout.bucketPath(AREA.pending, bucketNo);
    const from = path.length + 1;
    const reg: Registration = { stop: null, validFrom: this.listings.nextReadNo };
    this.watches.set(bucketNo, reg);
    coordinator.watchTree!(path, (event) => {
      if (this.watches.get(bucketNo) !== reg || this.closed) return;
      if (event.type === 'reset') {
        // Events may be missing before this: listings read from now on are complete again,
        // and the one held now is read again (a missed change would otherwise stay unseen:
        // a covered bucket has no children watch).
        reg.validFrom = this.listings.nextReadNo;
        this.listings.changed(bucketNo);
      }
      // Only entries (direct children) are named: a bucket holds nothing deeper. An entry's
      // data changes (a claim) change no listing.
      else if (event.type === 'dataChanged' || event.path.indexOf('/', from) >= 0) return;
      else if (event.type === 'created') this.created(bucketNo, reg, event.path.slice(from));
      else this.listings.entryDeleted(bucketNo, event.path.slice(from));
    }).then(
      (stop) => {
        // Dropped (or closed) while it was registering.
        if (this.watches.get(bucketNo) === reg) reg.stop = stop;
        else stop();
      },
      (err: unknown) => {
        if (this.watches.get(bucketNo) !== reg) return;
        this.watches.delete(bucketNo);
        if (codeOf(err) === 'UNIMPLEMENTED') this.unsupported = true;
        else this.failed = true;
        // Not covered after all: the next listing sets a children watch again.
        this.listings.touch(bucketNo);
        this.listings.wake();
      },
    );
    // The cached listing was read before the watch: it is read again, after the watch, so the
    // listing and the events together are complete from then on. At once, unless its children
    // watch is still armed: that watch reports the first change, and the re-read waits for it
    // (a quiet bucket costs no request).
    const bucket = this.listings.get(bucketNo);
    if (bucket && !bucket.watchArmed) bucket.relistAtNextUse();
  }

  /**
   * Whether every change of `b`'s entries is reported from now on: its tree watch is in
   * place on the server. Its listing needs no children watch then (see `BucketListings`).
   */
  covers(bucketNo: number): boolean {
    const reg = this.watches.get(bucketNo);
    return reg !== undefined && reg.stop !== null && !this.closed;
  }

  /**
   * Entry `name` was created in `bucket`: the listing shows it from now on, and a child of a
   * task held here is read at once (its parent may be about to complete). A root created
   * while the listing is complete needs nothing more; anything else (a child, whose guards
   * follow the listing's reads, or a listing not known complete) is a change, as a children
   * watch would report it.
   */
  private created(bucketNo: number, reg: Registration, name: string): void {
    // Registrations follow the watched buckets, so a watched listing or none.
    const bucket = this.listings.get(bucketNo);
    if (bucket === undefined) return;
    const entry = parseEntryName(name);
    if (!entry) {
      this.listings.changed(bucketNo);
      return;
    }
    const continuous = bucket.listing === null && bucket.readNo >= reg.validFrom;
    const inserted = bucket.insertFromEvent(entry, continuous);
    if (
      inserted &&
      continuous &&
      !entry.encodedKey.includes(KEY_SEPARATOR) &&
      this.covers(bucketNo)
    )
      this.listings.wake();
    else this.listings.changed(bucketNo);
    const sep = entry.encodedKey.lastIndexOf(KEY_SEPARATOR);
    if (sep > 0 && entry.kind !== ENTRY_KIND.dead && this.held.has(entry.encodedKey.slice(0, sep)))
      this.readAhead(bucketNo, bucket, entry, entry.encodedKey.split(KEY_SEPARATOR));
  }
}
