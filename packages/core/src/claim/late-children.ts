import type { EngineContext } from '../engine/context.js';
import type { OwnCompletions } from '../engine/group-commit.js';
import type { Claim } from '../engine/types.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import { entryNameOf } from './bucket-listings.js';
import type { Claimer } from './claimer.js';

/**
 * Keeps every claimer's cached listing true to the completions the group commit sends. While
 * a completion is out, its entry's deletion counts as this process's own: tree watches report
 * it before the reply, and it is no foreign change (see `BucketListings.deleting`). Once it
 * applied, the listing stops counting the deleted entry as a blocker of its listed
 * descendants (see `BucketListings.completed`), before the claim is let go: no claim call
 * sees the task neither held nor gone. One per engine context, told by the group commit: a
 * completion costs no async layer, array or closure here.
 */
export class CompletionListings implements OwnCompletions {
  constructor(
    private readonly ctx: EngineContext,
    private readonly claimers: Iterable<Claimer>,
  ) {}

  sending(claim: Claim): void {
    const bucket = this.ctx.layout.bucketOf(claim.key);
    for (const claimer of this.claimers) claimer.listings.deleting(bucket, claim.entryPath);
  }

  settled(claim: Claim, applied: boolean): void {
    const bucket = this.ctx.layout.bucketOf(claim.key);
    if (applied) this.completedHere(bucket, claim);
    for (const claimer of this.claimers)
      claimer.listings.deleteSettled(bucket, claim.entryPath, applied);
  }

  private completedHere(bucket: number, claim: Claim): void {
    let listedChild = false;
    let key: string | undefined;
    let name: string | undefined;
    for (const claimer of this.claimers) {
      // A claimer that has no listing of the bucket has nothing to take out.
      if (claimer.listings.get(bucket) === undefined) continue;
      key ??= claim.key.join(KEY_SEPARATOR);
      name ??= entryNameOf(claim.entryPath);
      if (claimer.listings.completed(bucket, key, name)) listedChild = true;
    }
    if (listedChild) this.ctx.hints.noteTypeHasChildren(claim.type);
  }
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
