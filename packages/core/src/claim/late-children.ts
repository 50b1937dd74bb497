import type { ChildHints } from '../engine/child-hints.js';
import type { EngineContext } from '../engine/context.js';
import type { Claim } from '../engine/types.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { Claimer } from './claimer.js';

/**
 * Completes `claim` by `write` and keeps every claimer's cached listing of its bucket true to
 * it. While the completion is out, the entry's deletion counts as this process's own: tree
 * watches report it before the reply, and it is no foreign change (see
 * `BucketListings.deleting`). Once it applied, the listing stops counting the deleted entry
 * as a blocker of its listed descendants (see `BucketListings.completed`), before the claim
 * is let go: no claim call sees the task neither held nor gone.
 */
export async function completeHere<T extends { status: string }>(
  ctx: EngineContext,
  claimers: Iterable<Claimer>,
  claim: Claim,
  write: () => Promise<T>,
): Promise<T> {
  const bucket = ctx.layout.bucketOf(claim.key);
  const name = claim.entryPath.slice(claim.entryPath.lastIndexOf('/') + 1);
  const ends: Array<(applied: boolean) => void> = [];
  for (const claimer of claimers) ends.push(claimer.listings.deleting(bucket, name));
  let applied = false;
  try {
    const out = await write();
    applied = out.status === 'completed';
    if (applied) completedHere(ctx.hints, claimers, bucket, claim, name);
    return out;
  } finally {
    for (const end of ends) end(applied);
  }
}

function completedHere(
  hints: ChildHints,
  claimers: Iterable<Claimer>,
  bucket: number,
  claim: Claim,
  name: string,
): void {
  const key = claim.key.join(KEY_SEPARATOR);
  let listedChild = false;
  for (const claimer of claimers)
    if (claimer.listings.completed(bucket, key, name)) listedChild = true;
  if (listedChild) hints.noteTypeHasChildren(claim.type);
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
  // No child of it queued here since: nothing to look for (see `ChildHints`), and no
  // promise made for it either: this runs for every completion.
  const hinted = ctx.hints.take(claim.key);
  if (!hinted && !ctx.hints.typeHasChildren(claim.type)) return undefined;
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
  if (stat) ctx.hints.noteTypeHasChildren(claim.type);
  for (const claimer of blind) claimer.listings.expectChild(bucket);
}
