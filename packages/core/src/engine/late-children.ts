import { KEY_SEPARATOR } from '../tree/keys.js';
import { noteTypeHasChildren, takeChildHint, typeHasChildren } from './child-hints.js';
import type { Claimer } from './claimer.js';
import type { EngineContext } from './context.js';
import type { Claim } from './types.js';

/**
 * This process completed `claim`: every claimer's cached listing of its bucket stops
 * counting the deleted entry as a blocker of its listed descendants (see
 * `BucketListings.completed`).
 */
export function completedHere(ctx: EngineContext, claimers: Iterable<Claimer>, claim: Claim): void {
  const bucket = ctx.layout.bucketOf(claim.key);
  const key = claim.key.join(KEY_SEPARATOR);
  const name = claim.entryPath.slice(claim.entryPath.lastIndexOf('/') + 1);
  let listedChild = false;
  for (const c of claimers) if (c.listings.completed(bucket, key, name)) listedChild = true;
  if (listedChild) noteTypeHasChildren(ctx.layout.world, claim.type);
}

/**
 * This process is about to complete `claim`: every claimer's listings know the entry's
 * deletion as their own until the returned function says how the completion ended (see
 * `BucketListings.deleting`).
 */
export function deletingHere(
  ctx: EngineContext,
  claimers: Iterable<Claimer>,
  claim: Claim,
): (applied: boolean) => void {
  const bucket = ctx.layout.bucketOf(claim.key);
  const name = claim.entryPath.slice(claim.entryPath.lastIndexOf('/') + 1);
  const ends: Array<(applied: boolean) => void> = [];
  for (const c of claimers) ends.push(c.listings.deleting(bucket, name));
  return (applied) => {
    for (const end of ends) end(applied);
  };
}

/**
 * After a completion: a child queued under the task since a claimer's listing was read is
 * runnable now, and must be chosen by its priority, not after that listing's next re-read
 * (a big listing is re-read at most every `relistMs`). One read of the task's tree node
 * tells whether it has children; only then do those claimers read the bucket again. Called
 * after the completion's reply: the change events of everything committed before it are in.
 */
export function lookForChildren(
  ctx: EngineContext,
  claimers: Iterable<Claimer>,
  claim: Claim,
): Promise<void> | undefined {
  // No child of it queued here since: nothing to look for (see `noteChildQueued`), and no
  // promise made for it either: this runs for every completion.
  const hinted = takeChildHint(ctx.layout.world, claim.key);
  if (!hinted && !typeHasChildren(ctx.layout.world, claim.type)) return undefined;
  return readForChildren(ctx, claimers, claim);
}

async function readForChildren(
  ctx: EngineContext,
  claimers: Iterable<Claimer>,
  claim: Claim,
): Promise<void> {
  const bucket = ctx.layout.bucketOf(claim.key);
  const key = claim.key.join(KEY_SEPARATOR);
  const blind = [...claimers].filter((c) => c.listings.mayHideChildOf(bucket, key));
  if (blind.length === 0) return;
  // A failed read cannot say "no children": read the bucket again, to be safe.
  const stat = await ctx.coordinator.exists(ctx.layout.treePath(claim.key)).catch(() => undefined);
  if (stat !== undefined && (stat === null || stat.numChildren === 0)) return;
  if (stat) noteTypeHasChildren(ctx.layout.world, claim.type);
  for (const c of blind) c.listings.expectChild(bucket);
}
