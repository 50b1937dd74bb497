import type { Op } from '../contract/coordinator.js';
import type { HandOff } from '../engine/carried-claim.js';
import type { EngineContext } from '../engine/context.js';
import type { Claim } from '../engine/types.js';
import { type LocalityScore, rivalOfChild } from '../tree/claim-order.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import { knownGuards } from './ancestor-guards.js';
import type { BucketListings, CachedEntry } from './bucket-listings.js';
import { type Candidate, candidateOf } from './candidate.js';
import { type ClaimAttempt, claimAttempt } from './claim-attempt.js';
import { adoptLostClaim } from './claim-recovery.js';
import type { ClaimerOptions } from './claimer-options.js';

export type { HandOff };

/** What a hand-off needs of its claimer. */
export interface HandOffView {
  ctx: EngineContext;
  opts: Pick<ClaimerOptions, 'worker' | 'host' | 'pid' | 'gate'>;
  listings: BucketListings;
  /** Keys held by this process (claimed, not yet settled). */
  held: Set<string>;
  /** Keys another worker holds a working node for. */
  busy: ReadonlySet<string>;
  /** Whether a read entry may be claimed now (type served, not paused or delayed). */
  usable(cached: CachedEntry, now: number): boolean;
  score: LocalityScore;
  /** Runnable tasks the child may pass: they have free slots of their own (`spareSlots`). */
  spare(): number;
  /** The claimer's bookkeeping of a claim that applied (`null`: dead-lettered instead). */
  won(attempt: ClaimAttempt, entryVersion: number): Promise<Claim | null>;
}

/**
 * Prepares the hand-off of a child of `parent`, which this process is completing in
 * `session`, or `null` (see {@link chooseHandOff}). The child is held, and its start taken
 * from the rate-limit gate, until the hand-off is settled. A promise when the child's
 * read-ahead is still out: see {@link chooseHandOff}.
 */
export function handOff(
  view: HandOffView,
  parent: Claim,
  session: string,
): HandOff | null | Promise<HandOff | null> {
  if (parent.session !== session) return null;
  const chosen = chooseHandOff(view, parent);
  if (!(chosen instanceof Promise)) return prepared(view, chosen, session);
  return chosen.then(() => {
    if (view.ctx.coordinator.sessionId !== session) return null;
    const again = chooseHandOff(view, parent);
    return again instanceof Promise ? null : prepared(view, again, session);
  });
}

function prepared(view: HandOffView, cand: Candidate | null, session: string): HandOff | null {
  const { ctx, opts } = view;
  const now = ctx.clock.now();
  if (!cand || (opts.gate && !opts.gate.take(cand.cached.data.type, now))) return null;
  const attempt = claimAttempt(ctx, opts, view.listings, cand, session, now);
  view.held.add(cand.entry.encodedKey);
  return handOffOf(attempt.ops, now, async (applied) => {
    const version =
      applied === 'unknown'
        ? await adoptLostClaim(ctx, opts.worker, attempt)
        : applied
          ? cand.cached.version + 1
          : null;
    if (version !== null) return view.won(attempt, version);
    view.held.delete(cand.entry.encodedKey);
    opts.gate?.refund(cand.cached.data.type);
    // Refused maybe for its own entry (queued again, cancelled): read it again to know.
    attempt.bucket?.forgetEntry(cand.entry.name);
    return null;
  });
}

/**
 * The child of `parent` (a task this process is completing) to hand off, or `null`. Only a
 * child this claimer would take next anyway qualifies, so the hand-off never changes the
 * claim order: the first child in claim order listed under `parent` in a watched bucket and
 * blocked by nothing else, whose entry and ancestors' tree nodes were read ahead while the
 * parent ran, when no more known runnable entries of the worker's buckets come before it
 * than the worker has other free slots (see {@link rivalsAhead}).
 *
 * The one wait: a parent that ran for less than a round trip finishes while its child's
 * read-ahead (sent when the parent was claimed) is still out. Then this returns that read:
 * its reply is due before the completion's could be, and without it the child would wait a
 * whole claim transaction after its parent's completion instead.
 */
export function chooseHandOff(
  view: HandOffView,
  parent: Claim,
): Candidate | null | Promise<unknown> {
  const { ctx, listings } = view;
  const bucketNo = ctx.layout.bucketOf(parent.key);
  const bucket = listings.get(bucketNo);
  const parentKey = parent.key.join(KEY_SEPARATOR);
  if (
    bucket === undefined ||
    !listings.watchedBuckets.has(bucketNo) ||
    !bucket.ancestors.has(parentKey)
  )
    return null;
  const now = ctx.clock.now();
  const spare = Math.max(0, view.spare());
  for (const entry of bucket.entries) {
    if (!entry.encodedKey.startsWith(`${parentKey}${KEY_SEPARATOR}`)) continue;
    const cached = bucket.openEntry(entry, view.held, view.busy);
    // Its only blocker is the parent, whose entry the same multi deletes.
    if (cached === undefined || bucket.hasListedAncestor(entry.encodedKey, parentKey)) continue;
    // The first child in claim order decides: a later one must not overtake it.
    if (cached === null) return bucket.readingAhead.get(entry.name) ?? null;
    if (!view.usable(cached, now)) continue;
    const key = entry.encodedKey.split(KEY_SEPARATOR);
    const guards = knownGuards(ctx, key, bucket.pzxid, bucket);
    if (guards === undefined) return bucket.readingAhead.get(entry.name) ?? null;
    if (guards === null) return null;
    const child: Candidate = { ...candidateOf(bucketNo, entry, cached), guards };
    return rivalsAhead(view, child, parentKey, now, spare) <= spare ? child : null;
  }
  return null;
}

/**
 * How many known runnable entries of the watched buckets come before `child` in the claim
 * order a claim call would use (priority, locality, then queue order), counted up to one
 * more than `spare` (enough to decide). An unread entry of a higher priority counts as one
 * that may; an unread one of the child's priority does not: it could not be claimed before
 * a read, a round trip the child, read and ready, need not wait (queue order among equals
 * holds for the entries this worker knows, as in a claim call's read-ahead). Each bucket is read from its head only down to the first entry the child
 * comes before with nothing to weigh but queue order (a bucket lists in that order): a
 * completion must stay cheap. So the locality of tasks queued after the child is not
 * weighed, a soft preference that a claim call would weigh. Where a rival stands is claim
 * order's rule (`rivalOfChild`).
 */
function rivalsAhead(
  view: HandOffView,
  child: Candidate,
  parentKey: string,
  now: number,
  spare: number,
): number {
  const childScore = view.score(child);
  let ahead = 0;
  for (const bucketNo of view.listings.watchedBuckets) {
    const bucket = view.listings.get(bucketNo);
    if (bucket === undefined) continue;
    for (const entry of bucket.entries) {
      if (ahead > spare) return ahead;
      if (rivalOfChild(entry, undefined, child, childScore) === 'rest-behind') break;
      if (entry === child.entry) continue;
      const cached = bucket.openEntry(entry, view.held, view.busy);
      if (cached === undefined) continue;
      // Children of the parent become runnable with the child: they compete too.
      const except = bucketNo === child.bucket ? parentKey : undefined;
      if (bucket.hasListedAncestor(entry.encodedKey, except)) continue;
      // Not read yet: weighed by its priority alone.
      if (cached === null) {
        if (rivalOfChild(entry, undefined, child, childScore) === 'ahead') ahead++;
        continue;
      }
      if (!view.usable(cached, now)) continue;
      const rival = candidateOf(bucketNo, entry, cached);
      const place = rivalOfChild(rival, view.score(rival), child, childScore);
      if (place === 'ahead') ahead++;
      else if (place === 'rest-behind') break;
    }
  }
  return ahead;
}

/**
 * A {@link HandOff} of `ops`, stamped `at`, whose outcome `resolve` turns into the child's claim. `settle`
 * runs `resolve` once; a `resolve` that throws counts as no claim (its bookkeeping is
 * `resolve`'s own).
 */
export function handOffOf(
  ops: readonly Op[],
  at: number,
  resolve: (applied: boolean | 'unknown') => Promise<Claim | null>,
): HandOff {
  let settled = false;
  let done: (claim: Claim | null) => void = () => {};
  const result = new Promise<Claim | null>((resolveResult) => {
    done = resolveResult;
  });
  return {
    ops,
    at,
    result,
    settle(applied) {
      if (settled) return;
      settled = true;
      resolve(applied).then(done, () => done(null));
    },
  };
}
