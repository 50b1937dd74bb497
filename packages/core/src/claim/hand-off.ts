import type { Op } from '../contract/coordinator.js';
import type { EngineContext } from '../engine/context.js';
import type { Claim } from '../engine/types.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import { compareForClaim, type LocalityScore } from '../tree/ordering.js';
import { knownGuards } from './ancestor-guards.js';
import type { BucketListings, CachedEntry } from './bucket-listings.js';
import { hasListedAncestor, openEntry } from './bucket-state.js';
import { type Candidate, candidateOf } from './candidate.js';
import { type ClaimAttempt, claimAttempt } from './claim-attempt.js';
import { adoptLostClaim } from './claim-recovery.js';
import type { ClaimerOptions } from './claimer-options.js';

/**
 * A hand-off: the claim of a child that a completion makes runnable, written in the
 * completion's own multi. Without it the child waits for the completion's reply, then for a
 * claim multi of its own: one more transaction in series, on a server that is busiest
 * exactly when trees run. With it the child starts the moment its parent's completion is
 * committed, in the slot its parent leaves.
 *
 * The claim is the one a claim call would write (the entry's `set @version`, the ephemeral
 * working node, the ancestors' checks), so it is fenced the same way; a multi is all or
 * nothing, so the parent's completion and the child's claim both happen or neither does.
 */
export interface HandOff {
  /** The claim's ops, to be appended to the completion's multi. */
  readonly ops: readonly Op[];
  /**
   * The engine clock's reading the claim was stamped with (the child's `startedAt`). The
   * parent's `completedAt` is stamped with it too: one multi commits both, and two readings
   * would put the child's start before its parent's completion.
   */
  readonly at: number;
  /**
   * What became of the multi that carried `ops`: `true` applied, `false` refused or never
   * sent (the parent is completed on its own, the child is claimed the usual way), `unknown`
   * its reply was lost (the claim is looked up). MUST be called exactly once per hand-off on
   * every path; later calls are ignored, so a `finally` may call it to be sure.
   */
  settle(applied: boolean | 'unknown'): void;
  /** The child's claim once `settle` has run: `null` when it was not claimed. */
  readonly result: Promise<Claim | null>;
}

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
  won(a: ClaimAttempt, entryVersion: number): Promise<Claim | null>;
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
  const a = claimAttempt(ctx, opts, view.listings, cand, session, now);
  view.held.add(cand.entry.encodedKey);
  return handOffOf(a.ops, now, async (applied) => {
    const version =
      applied === 'unknown'
        ? await adoptLostClaim(ctx, opts.worker, a)
        : applied
          ? cand.cached.version + 1
          : null;
    if (version !== null) return view.won(a, version);
    view.held.delete(cand.entry.encodedKey);
    opts.gate?.refund(cand.cached.data.type);
    // Refused maybe for its own entry (queued again, cancelled): read it again to know.
    a.st?.cache.delete(cand.entry.name);
    if (a.st) a.st.stale = true;
    return null;
  });
}

/**
 * The child of `parent` (a task this process is completing) to hand off, or `null`. Only a
 * child this claimer would take next anyway qualifies, so the hand-off never changes the
 * claim order: the first child in claim order listed under `parent` in a watched bucket and
 * blocked by nothing else, whose entry and ancestors' tree nodes were read ahead while the
 * parent ran, when no more known runnable entries of the worker's buckets come before it
 * than the worker has other free slots (see {@link aheadOf}).
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
  const bucket = ctx.layout.bucketOf(parent.key);
  const st = listings.get(bucket);
  const parentKey = parent.key.join(KEY_SEPARATOR);
  if (st === undefined || !listings.watchedBuckets.has(bucket) || !st.ancestors.has(parentKey))
    return null;
  const now = ctx.clock.now();
  const spare = Math.max(0, view.spare());
  for (const e of st.entries) {
    if (!e.encodedKey.startsWith(`${parentKey}${KEY_SEPARATOR}`)) continue;
    const cached = openEntry(st, e, view.held, view.busy);
    // Its only blocker is the parent, whose entry the same multi deletes.
    if (cached === undefined || hasListedAncestor(e.encodedKey, st.present, parentKey)) continue;
    // The first child in claim order decides: a later one must not overtake it.
    if (cached === null) return st.readingAhead.get(e.name) ?? null;
    if (!view.usable(cached, now)) continue;
    const key = e.encodedKey.split(KEY_SEPARATOR);
    const guards = knownGuards(ctx, key, st.pzxid, st.guardStats);
    if (guards === undefined) return st.readingAhead.get(e.name) ?? null;
    if (guards === null) return null;
    const child: Candidate = { ...candidateOf(bucket, e, cached), guards };
    return aheadOf(view, child, parentKey, now, spare) <= spare ? child : null;
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
 * weighed, a soft preference that a claim call would weigh.
 */
function aheadOf(
  view: HandOffView,
  child: Candidate,
  parentKey: string,
  now: number,
  spare: number,
): number {
  const childScore = view.score(child);
  let ahead = 0;
  for (const b of view.listings.watchedBuckets) {
    const st = view.listings.get(b);
    if (st === undefined) continue;
    for (const e of st.entries) {
      if (ahead > spare) return ahead;
      if (e.priority < child.priority) break;
      if (e === child.entry) continue;
      const cached = openEntry(st, e, view.held, view.busy);
      if (cached === undefined) continue;
      // Children of the parent become runnable with the child: they compete too.
      const except = b === child.bucket ? parentKey : undefined;
      if (hasListedAncestor(e.encodedKey, st.present, except)) continue;
      // Not read yet: a higher priority may come first; one of the child's own priority is
      // not weighed (it cannot be claimed before a read, and the child is read and ready).
      if (cached === null) {
        if (e.priority > child.priority) ahead++;
        continue;
      }
      if (!view.usable(cached, now)) continue;
      const rival = candidateOf(b, e, cached);
      const score = view.score(rival);
      if (e.priority > child.priority || score > childScore) ahead++;
      else if (score === childScore) {
        if (compareForClaim(rival, child) < 0) ahead++;
        else if (rival.hints === undefined) break;
      }
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
  const result = new Promise<Claim | null>((r) => {
    done = r;
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
