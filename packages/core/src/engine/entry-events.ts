import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';
import type { BucketListings } from './bucket-listings.js';
import { type BucketState, insertListed } from './bucket-state.js';
import type { EngineContext } from './context.js';
import { codeOf } from './errors.js';
import { AREA, ENTRY_KIND, type EntryName, parseEntryName } from './layout.js';

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
 * An accelerator, never a source of truth: the listings and their children watches stay as
 * they are, a missed event (before the watch is in place, across a `reset`) costs only the
 * head start, and without `watchTree` (another adapter, an older server) nothing changes.
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
    private readonly readAhead: (b: number, st: BucketState, e: EntryName, key: TaskKey) => void,
  ) {}

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
    for (const [b, reg] of this.watches) {
      if (want.has(b)) continue;
      this.watches.delete(b);
      reg.stop?.();
    }
    for (const b of want) if (!this.watches.has(b)) this.register(b);
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

  private register(b: number): void {
    const { coordinator } = this.ctx;
    const path = this.ctx.layout.bucketPath(AREA.pending, b);
    const from = path.length + 1;
    const reg: Registration = { stop: null, validFrom: this.listings.nextReadNo };
    this.watches.set(b, reg);
    coordinator.watchTree!(path, (e) => {
      if (this.watches.get(b) !== reg) return;
      // Events may be missing before this: listings read from now on are complete again.
      if (e.type === 'reset') reg.validFrom = this.listings.nextReadNo;
      // Only entries (direct children) are named: a bucket holds nothing deeper.
      else if (e.type === 'created' && e.path.indexOf('/', from) < 0)
        this.created(b, reg, e.path.slice(from));
    }).then(
      (stop) => {
        // Dropped (or closed) while it was registering.
        if (this.watches.get(b) === reg) reg.stop = stop;
        else stop();
      },
      (err: unknown) => {
        if (this.watches.get(b) === reg) this.watches.delete(b);
        if (codeOf(err) === 'UNIMPLEMENTED') this.unsupported = true;
        else this.failed = true;
      },
    );
    // The cached listing was read before the watch: the next claim reads it again, after the
    // watch, so the listing and the events together are complete from then on.
    const st = this.listings.get(b);
    if (st) {
      st.stale = true;
      st.listedAt = Number.NEGATIVE_INFINITY;
    }
  }

  /**
   * Entry `name` was created in `bucket`: the listing shows it from now on, and a child of a
   * task held here is read at once (its parent may be about to complete).
   */
  private created(b: number, reg: Registration, name: string): void {
    // Registrations follow the watched buckets, so a watched listing or none.
    const st = this.listings.get(b);
    if (this.closed || st === undefined) return;
    const e = parseEntryName(name);
    if (!e) return;
    insertListed(st, e, st.listing === null && st.readNo >= reg.validFrom);
    const sep = e.encodedKey.lastIndexOf(KEY_SEPARATOR);
    if (sep > 0 && e.kind !== ENTRY_KIND.dead && this.held.has(e.encodedKey.slice(0, sep)))
      this.readAhead(b, st, e, e.encodedKey.split(KEY_SEPARATOR));
  }
}
