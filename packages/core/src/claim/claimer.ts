import type { Op } from '../contract/coordinator.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf, multiFailure, UNKNOWN_OUTCOME_CODES } from '../engine/errors.js';
import { claimsHeldThrough } from '../engine/held-claims.js';
import type { EntryName } from '../engine/layout.js';
import { failClaim } from '../engine/settle.js';
import type { Claim } from '../engine/types.js';
import { blockingAncestor } from '../tree/blocking.js';
import {
  claimableBeforeReads,
  type LocalityScore,
  mayOutrank,
  notBelowGone,
  orderForWorker,
  refusedFloor,
} from '../tree/claim-order.js';
import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';
import { hintLocality } from '../tree/ordering.js';
import { ancestorGuards, knownGuards } from './ancestor-guards.js';
import { BucketListings, type BucketState, type CachedEntry } from './bucket-listings.js';
import { type Candidate, candidateOf, spreadStart } from './candidate.js';
import { type ClaimAttempt, claimAttempt } from './claim-attempt.js';
import { adoptLostClaim, claimRefused, entryMoved } from './claim-recovery.js';
import { eligibleAt } from './claim-wait.js';
import type { ClaimerOptions } from './claimer-options.js';
import { EntryEvents } from './entry-events.js';
import { type HandOff, type HandOffView, handOff } from './hand-off.js';
import { childrenAhead, readAhead } from './read-ahead.js';

export { DEFAULT_LOCALITY_WAIT_MS } from './claim-wait.js';
export type { ClaimerOptions, ClaimGate } from './claimer-options.js';

/** Rounds of one claim call: the first from cached listings, the others after re-reading. */
const CLAIM_ROUNDS = 4;
/** Batches of candidates one round tries before it lists again. */
const TRIES_PER_ROUND = 3;
/**
 * Most claims in one multi (group commit). ZooKeeper's cost is mostly per transaction, so a
 * worker with free slots claims several tasks in one; the bound keeps one refused claim from
 * costing many (the others are then claimed one by one) and the request far below its limit.
 */
export const MAX_CLAIM_GROUP = 32;

/**
 * Picks the next runnable tasks from the bucket listings (see {@link BucketListings}) and
 * claims them: one multi per task sets the entry's claim and creates the ephemeral working
 * node, so two workers never both win one task.
 */
export class Claimer {
  /** The cached listings this claimer chooses from (the engine asks them about children). */
  readonly listings: BucketListings;
  /** Keys someone else holds a working node for; cleared by an exists watch. */
  private readonly busy = new Set<string>();
  /** Earliest time a task skipped for `notBefore` or locality becomes eligible. */
  wakeAt = Number.POSITIVE_INFINITY;
  private closed = false;
  private session: string | null = null;
  private readonly score: LocalityScore;
  /** How well this worker matches a task's hints, against what its peers may match. */
  private readonly hintScore: LocalityScore;
  /** What a hand-off reads and updates of this claimer (see `hand-off.ts`). */
  private readonly handOffView: HandOffView;
  /** Tree watches on the watched buckets, when asked for (`entryEvents`). */
  private readonly events: EntryEvents | null;

  constructor(
    private readonly ctx: EngineContext,
    private readonly opts: ClaimerOptions,
    /** Keys held by this process (claimed, not yet settled). */
    private readonly held: Set<string>,
    /** Called when a watch says something changed: an idle worker wakes up. */
    private readonly onChange: () => void = () => {},
  ) {
    const datasets = new Set(opts.datasets ?? []);
    const hints = hintLocality({
      ...(opts.server !== undefined ? { server: opts.server } : {}),
      ...(opts.hasFile ? { hasFile: opts.hasFile } : {}),
      hasDataset: (dataset) => datasets.has(dataset),
    });
    this.hintScore = hints;
    const extra = opts.locality;
    this.score = extra ? (t) => hints(t) + extra(t) : hints;
    // A bucket whose tree watch is in place needs no children watch (see EntryEvents).
    const listingOpts = { ...opts, eventFed: (b: number) => this.events?.covers(b) === true };
    this.listings = new BucketListings(ctx, listingOpts, held, () => {
      if (!this.closed) onChange();
    });
    // Built once: every completion of a worker asks it.
    this.handOffView = {
      ctx,
      opts,
      listings: this.listings,
      held,
      busy: this.busy,
      usable: (cached, now) => !this.waiting(cached, now),
      score: this.score,
      spare: () => opts.spareSlots?.() ?? 0,
      won: (attempt, version) => Promise.resolve(this.won(attempt, version)),
    };
    const mode = opts.entryEvents;
    this.events = mode
      ? new EntryEvents(
          ctx,
          this.listings,
          held,
          (bucketNo, bucket, entry, key) =>
            readAhead(ctx, this.listings, bucketNo, bucket, entry, key),
          mode === 'small',
        )
      : null;
    if (mode === true || mode === 'small') this.events?.start();
  }

  /** Buckets whose listings are cached and watched; all others are listed on every use. */
  setWatched(buckets: Iterable<number>): void {
    this.listings.setWatched(buckets);
    this.events?.sync();
  }

  /** Stops reacting to watches. */
  close(): void {
    this.closed = true;
    this.listings.close();
    this.events?.close();
  }

  /** Makes the next claim re-read a bucket (after a claim was given back, say). */
  touch(bucket: number): void {
    this.listings.touch(bucket);
  }

  /** Whether `bucket` (not owned) is unchanged since a steal pass listed it. */
  scouted(bucket: number): boolean {
    return this.listings.scouted(bucket);
  }

  /** Work worth a claim for one free slot: an unblocked child, or read work above `priority`. */
  hasUrgent(buckets: readonly number[], priority: number): boolean {
    const usable = (entry: EntryName, cached?: CachedEntry) =>
      !this.busy.has(entry.encodedKey) &&
      (cached === undefined || !this.waiting(cached, this.ctx.clock.now()));
    return (
      this.listings.unblockedIn(buckets) || this.listings.knownWorkAbove(buckets, priority, usable)
    );
  }

  /**
   * A child of `parent`, which this process is completing, to claim in the completion's own
   * multi (see `hand-off.ts`), or `null`. The child is held (and its start taken from the
   * rate-limit gate) until the hand-off is settled.
   */
  handOff(parent: Claim): HandOff | null | Promise<HandOff | null> {
    const session = this.ctx.coordinator.sessionId;
    // Listings read in another session may lack entries: they choose nothing.
    if (this.closed || session === null || session !== this.session) return null;
    return handOff(this.handOffView, parent, session);
  }

  /** Listings and entry reads this claimer has sent. */
  get readRequests(): number {
    return this.listings.requests;
  }

  /** Forgets every listing (after a session change, when watches may be gone). */
  invalidate(): void {
    this.listings.clear();
    this.busy.clear();
  }

  /** Claims the best runnable task among `buckets`, or returns `null` when none is runnable. */
  async claim(buckets: readonly number[]): Promise<Claim | null> {
    return (await this.claimBatch(buckets, 1))[0] ?? null;
  }

  /**
   * Claims up to `max` runnable tasks among `buckets`, best first. The claim writes for
   * several candidates go out together (pipelined), so a worker with free slots fills them
   * in one round trip instead of one per task.
   */
  async claimBatch(buckets: readonly number[], max: number, spread = false): Promise<Claim[]> {
    this.wakeAt = Number.POSITIVE_INFINITY;
    // Watches belong to a session: after a new one, every cached listing is unwatched and
    // may lack entries whose claims died with the old session.
    if (this.ctx.coordinator.sessionId !== this.session) {
      this.invalidate();
      this.session = this.ctx.coordinator.sessionId;
    }
    this.listings.beginCall(buckets);
    this.events?.ensure();
    this.events?.resize();
    const won: Claim[] = [];
    for (let round = 0; round < CLAIM_ROUNDS && won.length < max; round++) {
      // Round 0 works from cached listings; only when they offer nothing are stale ones
      // waited for (a partial batch is fine: the next call claims more).
      if (round > 0 && won.length > 0) break;
      await this.listings.refresh(buckets, round > 0);
      const candidates = await this.candidates(buckets, max - won.length);
      if (candidates.length === 0) {
        if (round > 0) break;
        continue;
      }
      let offset = spread ? spreadStart(candidates, max - won.length, this.ctx.clock.random()) : 0;
      for (
        let tries = 0;
        tries < TRIES_PER_ROUND && won.length < max && offset < candidates.length;
        tries++
      ) {
        const slice = candidates.slice(offset, offset + (max - won.length));
        offset += slice.length;
        const admitted = this.admitted(slice);
        const groups: Candidate[][] = [];
        for (let i = 0; i < admitted.length; i += MAX_CLAIM_GROUP)
          groups.push(admitted.slice(i, i + MAX_CLAIM_GROUP));
        const got = (await Promise.all(groups.map((group) => this.gatedTogether(group)))).flat();
        for (const claim of got) if (claim) won.push(claim);
        // No lower candidate passes a task refused as moved: the next round re-reads first.
        const top = refusedFloor(got, admitted, this.listings);
        if ((candidates[offset]?.priority ?? top) < top) break;
      }
    }
    // Listings read by this call may have crossed a bound: the watches follow now, not at
    // the next call (an idle worker's next call may be long in coming).
    this.events?.resize();
    return won;
  }

  /** The candidates the rate-limit gate lets start now (each takes one start). */
  private admitted(batch: Candidate[]): Candidate[] {
    const gate = this.opts.gate;
    if (!gate) return batch;
    const now = this.ctx.clock.now();
    return batch.filter((cand) => {
      const type = cand.cached.data.type;
      if (gate.take(type, now)) return true;
      this.wakeAt = Math.min(this.wakeAt, gate.nextAt(type, now));
      return false;
    });
  }

  /** Claims a group; each claim that does not happen gives its start back to the gate. */
  private async gatedTogether(group: Candidate[]): Promise<(Claim | null)[]> {
    const got = await this.claimTogether(group);
    got.forEach((claim, index) => {
      if (!claim) this.opts.gate?.refund(group[index]!.cached.data.type);
    });
    return got;
  }

  /** Whether a known entry cannot be claimed now; records when it may become eligible. */
  private waiting(cached: CachedEntry, now: number): boolean {
    const at = eligibleAt(this.opts, this.hintScore, cached, now);
    if (at <= now) return false;
    this.wakeAt = Math.min(this.wakeAt, at);
    return true;
  }

  private async candidates(buckets: readonly number[], wanted: number): Promise<Candidate[]> {
    const lookahead = this.listings.lookahead;
    const now = this.ctx.clock.now();
    const known: Candidate[] = [];
    const fetches: Promise<void>[] = [];
    const unread: EntryName[] = [];
    const unreadIn: BucketState[] = [];
    for (const bucketNo of buckets) {
      const bucket = this.listings.get(bucketNo);
      if (!bucket) continue;
      const stateOf = (key: TaskKey) =>
        bucket.present.has(key.join(KEY_SEPARATOR)) ? ('pending' as const) : undefined;
      let taken = 0;
      let ahead = 0;
      for (const entry of bucket.entries) {
        if (taken >= lookahead) break;
        const open = bucket.openEntry(entry, this.held, this.busy);
        if (open === undefined) continue;
        const cached = open ?? undefined;
        // Roots (most tasks) have no ancestors to check: skip the split and its garbage.
        const guarded = entry.encodedKey.includes(KEY_SEPARATOR);
        if (guarded) {
          const key = entry.encodedKey.split(KEY_SEPARATOR);
          const blocker = blockingAncestor(key, stateOf);
          if (blocker !== null) {
            if (ahead < lookahead && this.held.has(blocker.join(KEY_SEPARATOR))) {
              ahead++;
              readAhead(this.ctx, this.listings, bucketNo, bucket, entry, key);
            }
            continue;
          }
          // No listing can show an ancestor queued again (a completed task) whose change event
          // is still on its way: however up to date the listing looks, the child's claim
          // checks its ancestors (see `ancestorGuards`).
        }
        if (cached && this.waiting(cached, now)) continue;
        taken++;
        if (cached && !guarded) {
          known.push(candidateOf(bucketNo, entry, cached));
          continue;
        }
        if (cached) {
          const key = entry.encodedKey.split(KEY_SEPARATOR);
          const guards = knownGuards(this.ctx, key, bucket.pzxid, bucket);
          if (guards === null) {
            bucket.markStale();
            continue;
          }
          if (guards !== undefined) {
            known.push({ ...candidateOf(bucketNo, entry, cached), guards });
            continue;
          }
        }
        unread.push(entry);
        unreadIn.push(bucket);
        fetches.push(this.readCandidate(bucketNo, bucket, entry, guarded, now, known));
      }
    }
    // Enough known work, or known work of a higher priority than all that is still being read
    // (a child a completion here just made runnable, say): the reads of newly seen entries
    // finish in the background (read-ahead) instead of delaying this claim, unless one of them
    // would be claimed first: priority (then FIFO) holds from the moment a task is runnable.
    const ready = orderForWorker(
      known.length >= wanted ? known : claimableBeforeReads(known, unread),
      this.score,
    );
    const last = ready[Math.min(wanted, ready.length) - 1];
    if (last !== undefined && !unread.some((entry) => mayOutrank(entry, last.priority))) {
      Promise.all(fetches).catch(() => undefined);
      return ready;
    }
    await Promise.all(fetches);
    return orderForWorker(notBelowGone(known, unread, unreadIn), this.score);
  }

  /** Reads an entry (for a guarded child, its ancestors too) and adds it to `known`. */
  private async readCandidate(
    bucketNo: number,
    bucket: BucketState,
    entry: EntryName,
    guarded: boolean,
    now: number,
    known: Candidate[],
  ): Promise<void> {
    const read = bucket.cache.get(entry.name) ?? this.listings.fetch(bucketNo, bucket, entry);
    // A root (most tasks) waits for its entry alone: no Promise.all and its promises per read,
    // and no array to take apart.
    let cached: CachedEntry | null;
    let guards: Op[] | null | undefined;
    if (guarded)
      [cached, guards] = await Promise.all([
        read,
        ancestorGuards(this.ctx, entry.encodedKey.split(KEY_SEPARATOR), bucket.pzxid, bucket),
      ]);
    else cached = await read;
    if (!cached || this.waiting(cached, now)) return;
    // An ancestor changed after the listing: read the bucket again before this child.
    if (guards === null) {
      bucket.markStale();
      return;
    }
    const candidate = candidateOf(bucketNo, entry, cached);
    if (guards) candidate.guards = guards;
    known.push(candidate);
  }

  private async tryClaim(cand: Candidate): Promise<Claim | null> {
    const session = this.ctx.coordinator.sessionId;
    if (session === null) return null;
    const attempt = claimAttempt(
      this.ctx,
      this.opts,
      this.listings,
      cand,
      session,
      this.ctx.clock.now(),
    );
    this.held.add(cand.entry.encodedKey);
    try {
      await this.ctx.coordinator.multi(attempt.ops);
    } catch (err) {
      const adopted = await this.adoptIfLost(err, attempt);
      if (adopted !== null) return this.won(attempt, adopted);
      this.held.delete(cand.entry.encodedKey);
      return this.claimRefused(err, multiFailure(err), attempt);
    }
    return this.won(attempt, cand.cached.version + 1);
  }

  /**
   * Claims several candidates in ONE multi (group commit). The multi is atomic: it applied
   * for all or for none. A refused one (another worker was faster, its entry moved on) must
   * not cost the others their claim: it is handled as a refusal and the rest are claimed one
   * by one. A lost reply is resolved per claim, like a single claim's.
   */
  private async claimTogether(cands: readonly Candidate[]): Promise<(Claim | null)[]> {
    if (cands.length === 1) return [await this.tryClaim(cands[0]!)];
    const session = this.ctx.coordinator.sessionId;
    if (session === null) return cands.map(() => null);
    const now = this.ctx.clock.now();
    const attempts = cands.map((cand) =>
      claimAttempt(this.ctx, this.opts, this.listings, cand, session, now),
    );
    for (const attempt of attempts) this.held.add(attempt.cand.entry.encodedKey);
    try {
      await this.ctx.coordinator.multi(attempts.flatMap((attempt) => attempt.ops));
    } catch (err) {
      const failure = multiFailure(err);
      // The refused op, as an index into its own claim's ops (claims differ in length: a
      // guarded child's carries checks).
      let first = 0;
      const at = attempts.map((attempt) => {
        const start = first;
        first += attempt.ops.length;
        return failure !== null && failure.index >= start && failure.index < first
          ? failure.index - start
          : -1;
      });
      // A task refused as moved may be pending under a new name: no lower claim passes it.
      const moved = attempts.find(
        (_, i) => failure !== null && entryMoved({ ...failure, index: at[i]! }),
      );
      const floor = moved?.cand.priority ?? Number.NEGATIVE_INFINITY;
      return Promise.all(
        attempts.map(async (attempt, index) => {
          const adopted = await this.adoptIfLost(err, attempt);
          if (adopted !== null) return this.won(attempt, adopted);
          this.held.delete(attempt.cand.entry.encodedKey);
          if (UNKNOWN_OUTCOME_CODES.has(codeOf(err) ?? ''))
            return this.claimRefused(err, null, attempt);
          if (at[index]! < 0)
            return attempt.cand.priority < floor ? null : this.tryClaim(attempt.cand);
          return this.claimRefused(err, { index: at[index]!, code: failure!.code }, attempt);
        }),
      );
    }
    const out = attempts.map((attempt) => this.won(attempt, attempt.cand.cached.version + 1));
    return out.some((c) => c instanceof Promise) ? Promise.all(out) : (out as (Claim | null)[]);
  }

  /** After a failed claim multi: the entry's version when its lost reply hid a success. */
  private adoptIfLost(err: unknown, attempt: ClaimAttempt): Promise<number | null> {
    if (!UNKNOWN_OUTCOME_CODES.has(codeOf(err) ?? '')) return Promise.resolve(null);
    return adoptLostClaim(this.ctx, this.opts.worker, attempt);
  }

  /** A claim multi applied: the bookkeeping, and the claim (no promise: most claims need none). */
  private won(attempt: ClaimAttempt, entryVersion: number): Claim | Promise<null> {
    const { ctx } = this;
    const { cand, bucket, key, entryPath, workingPath, claimed } = attempt;
    const entryData = cand.cached.data;
    claimsHeldThrough(ctx.coordinator).add(workingPath);
    if (bucket) {
      bucket.claimedHere(cand.entry, cand.cached);
      // Its listed children wait on it alone now: read them ahead, for a quick hand-off.
      if (bucket.ancestors.has(cand.entry.encodedKey)) {
        childrenAhead(ctx, this.listings, cand.bucket, bucket, key);
        this.events?.start();
      }
    }
    const claim: Claim = {
      key,
      name: entryData.name,
      type: entryData.type,
      data: entryData.data,
      attempt: claimed.attempts,
      maxAttempts: entryData.maxAttempts,
      session: attempt.identity.session,
      worker: this.opts.worker,
      startedAt: attempt.identity.at,
      entryPath,
      entryVersion,
      priority: cand.entry.priority,
      workingPath,
      entry: claimed,
    };
    if (entryData.hints) claim.hints = entryData.hints;
    if (entryData.attempts >= entryData.maxAttempts) {
      const error = {
        message: `worker lost during attempt ${entryData.attempts} of ${entryData.maxAttempts} (last claimed by ${entryData.claim?.worker ?? 'unknown'})`,
        code: 'WORKER_LOST',
      };
      ctx.logger.warn({ key: cand.entry.encodedKey, error: error.message }, 'task dead-lettered');
      const done = () => {
        this.held.delete(cand.entry.encodedKey);
        claimsHeldThrough(ctx.coordinator).delete(workingPath);
      };
      // Dead-lettered: a promise of `null` once the failure is written.
      return failClaim(ctx, claim, error)
        .finally(done)
        .then(() => null);
    }
    return claim;
  }

  /** A refused claim multi: remembers why, and says `null` (see {@link claimRefused}). */
  private claimRefused(
    err: unknown,
    failure: { index: number; code: string } | null,
    attempt: ClaimAttempt,
  ): Promise<null> {
    return claimRefused(this.ctx, err, failure, attempt, (key, path, bucketNo) =>
      this.markBusy(key, path, bucketNo),
    );
  }

  /** Someone else works on `key`: skip it until its working node goes. */
  private markBusy(encodedKey: string, workingPath: string, bucket: number): void {
    this.busy.add(encodedKey);
    const clear = () => {
      this.busy.delete(encodedKey);
      this.listings.markStale(bucket);
      if (!this.closed) this.onChange();
    };
    this.ctx.coordinator.exists(workingPath, { watch: clear }).then(
      (stat) => {
        if (stat === null) this.busy.delete(encodedKey);
      },
      () => this.busy.delete(encodedKey),
    );
  }
}
