import type { Claimer } from '../claim/claimer.js';
import type { Claim, EngineClock } from '../engine/types.js';

/** Buckets one steal claim call lists at once: bounds the memory a pass over busy buckets takes. */
const BUCKETS_PER_CALL = 8;
/**
 * Requests per second that steal passes finding nothing may spend on average: after such a
 * pass, the next one waits until its listings and reads are paid off at this rate. Half the
 * one request per second an idle worker may make, so the rest of its upkeep fits too.
 */
export const IDLE_STEAL_REQUESTS_PER_S = 0.5;

/**
 * When and where an idle worker looks for work in buckets it does not own. A steal pass
 * lists a bucket it watches (`watches`: a bounded few idle workers per bucket, chosen from
 * the registry) with a children watch and drops the listing; the bucket is listed again
 * only after that watch fired (something was queued or removed there), `stealAfterMs` after
 * the change so its owner gets the first go, or when an entry seen there becomes eligible
 * (`notBefore`, locality wait). The other buckets are listed, without a watch, only while
 * passes find work (a streak that a watched bucket or a first look started): so a new task
 * in an idle fleet wakes its owner and its few watchers, not every idle worker. A pass that
 * finds nothing makes the next one wait until what it spent is paid off at
 * {@link IDLE_STEAL_REQUESTS_PER_S} (a first look at a bucket and a streak are free): a quiet
 * world costs an idle worker no requests at all, a busy one (of work this worker cannot
 * take) at most that rate.
 */
export class IdleStealer {
  /** When a bucket's watch fired since a pass last listed it (engine clock). */
  private readonly changedAt = new Map<number, number>();
  /** When entries seen in a bucket become eligible (plus the owner's head start). */
  private readonly recheckAt = new Map<number, number>();
  /**
   * Buckets listed together with the last pass's claims: more may wait there, and no watch
   * would say so (a claim changes no listing).
   */
  private readonly claimedIn = new Set<number>();
  /** No pass before this time unless the last one found work. */
  private quietUntil = Number.NEGATIVE_INFINITY;
  private cursor = 0;
  /** The last pass claimed something: pass again as soon as slots free up. */
  stealing = false;
  /** Buckets not owned, and the owned list they were computed from. */
  private others: readonly number[] = [];
  private othersOf: readonly number[] | null = null;

  constructor(
    private readonly claimer: Claimer,
    private readonly clock: EngineClock,
    private readonly stealAfterMs: number,
    /** Whether this worker keeps a steal watch on a bucket it does not own. */
    private readonly watches: (bucket: number) => boolean = () => true,
  ) {
    // Each stealer starts its round of the other buckets at a place of its own, so idle
    // workers do not all list (and claim in) the same buckets first.
    this.cursor = Math.floor(clock.random() * 0x7fffffff);
  }

  /** The buckets of `all` not in `owned`, recomputed only when ownership changed. */
  othersThan(all: readonly number[], owned: readonly number[]): readonly number[] {
    if (owned !== this.othersOf) {
      this.othersOf = owned;
      this.others = all.filter((b) => !owned.includes(b));
    }
    return this.others;
  }

  /**
   * The children watch a pass left on `bucket` fired. One left while this worker watched the
   * bucket and no longer does (the registry changed) is spent, not followed: the bucket's
   * watchers now look there.
   */
  changed(bucket: number): void {
    if (!this.watches(bucket)) return;
    if (!this.changedAt.has(bucket)) this.changedAt.set(bucket, this.clock.now());
  }

  /**
   * When `bucket` is worth listing; `-Infinity` when a watched bucket was never listed (or
   * lost its watch), when the last pass claimed there, or, for a bucket not watched, while
   * passes find work: a look that costs nothing off the budget.
   */
  private dueAt(bucket: number): number {
    if (this.claimedIn.has(bucket)) return Number.NEGATIVE_INFINITY;
    let at = Number.POSITIVE_INFINITY;
    if (!this.claimer.scouted(bucket)) {
      const changed = this.changedAt.get(bucket);
      if (changed !== undefined) at = changed + this.stealAfterMs;
      else if (this.stealing || this.watches(bucket)) at = Number.NEGATIVE_INFINITY;
    }
    const recheck = this.recheckAt.get(bucket);
    return recheck === undefined ? at : Math.min(at, recheck);
  }

  /** Earliest time a pass over `others` could find something new. */
  wakeAt(others: readonly number[]): number {
    let at = Number.POSITIVE_INFINITY;
    for (const bucket of others) at = Math.min(at, this.dueAt(bucket));
    return this.stealing ? at : Math.max(at, this.quietUntil);
  }

  /**
   * Lists the buckets of `others` that are due and claims up to `free` tasks there, the
   * best first across each group of buckets listed together.
   */
  async pass(others: readonly number[], free: number): Promise<Claim[]> {
    const now = this.clock.now();
    if (!this.stealing && now < this.quietUntil) return [];
    const otherCount = others.length;
    const due: number[] = [];
    for (let i = 0; i < otherCount; i++) {
      const bucket = others[(this.cursor + i) % otherCount]!;
      if (this.dueAt(bucket) <= now) due.push(bucket);
    }
    if (due.length === 0) {
      this.stealing = false;
      return [];
    }
    // Buckets never listed here (or whose watch is gone) are looked at for free: that happens
    // once per bucket after a start, a new session or a change of owners, not in a loop. So
    // is a bucket claimed in last time: a streak of claims ends with one free look.
    const charged = due.some((b) => this.dueAt(b) > Number.NEGATIVE_INFINITY);
    const spentBefore = this.claimer.readRequests;
    let claims: Claim[] = [];
    for (let i = 0; i < due.length && claims.length === 0; i += BUCKETS_PER_CALL) {
      const group = due.slice(i, i + BUCKETS_PER_CALL);
      for (const bucket of group) {
        this.changedAt.delete(bucket);
        this.recheckAt.delete(bucket);
        this.claimedIn.delete(bucket);
      }
      claims = await this.claimer.claimBatch(group, free, true);
      // A claim changes no listing, so no watch would bring a pass back to what is left
      // there: look there again next pass. Entries waiting for a time: look again then.
      // Every bucket of the group: what the free slots could not take may be in any of them.
      if (claims.length > 0) for (const bucket of group) this.claimedIn.add(bucket);
      const wake = this.claimer.wakeAt + this.stealAfterMs;
      if (Number.isFinite(wake)) for (const bucket of group) this.recheckAt.set(bucket, wake);
      if (claims.length > 0) this.cursor = (others.indexOf(group[0]!) + 1) % otherCount;
    }
    this.stealing = claims.length > 0;
    if (!this.stealing) {
      const spent = charged ? this.claimer.readRequests - spentBefore : 0;
      const pay = (spent * 1000) / IDLE_STEAL_REQUESTS_PER_S;
      this.quietUntil = this.clock.now() + Math.max(this.stealAfterMs, pay);
    }
    return claims;
  }
}
