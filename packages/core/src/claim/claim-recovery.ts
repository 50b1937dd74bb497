import { decodeJson } from '../contract/paths.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf, UNKNOWN_OUTCOME_CODES } from '../engine/errors.js';
import { claimsHeldThrough } from '../engine/held-claims.js';
import { sessionBack } from '../engine/session.js';
import type { ClaimIdentity, EntryData } from '../engine/types.js';
import type { ClaimAttempt } from './claim-attempt.js';

/** The parts of a claim attempt that show whether its multi applied. */
export interface ClaimWritten {
  entryPath: string;
  workingPath: string;
  identity: ClaimIdentity;
}

/**
 * After a claim multi's reply was lost: whether it applied, by the working node being this
 * session's own and the entry carrying this very claim (session, time and worker). Returns
 * the entry's version then (the claim is adopted), else `null`. Without this, a claim that
 * applied but whose reply was lost would hold the task for as long as the session lives, run
 * by no one.
 */
export async function adoptLostClaim(
  ctx: EngineContext,
  worker: string,
  attempt: ClaimWritten,
): Promise<number | null> {
  const { coordinator } = ctx;
  const { entryPath, workingPath } = attempt;
  const { session, at } = attempt.identity;
  try {
    if (!(await sessionBack(coordinator, session))) return null;
    const stat = await coordinator.exists(workingPath);
    if (stat?.ephemeralOwner !== session) return null;
    const entry = await coordinator.get(entryPath);
    const claim = decodeJson<EntryData>(entry.data, entryPath).claim;
    if (claim?.session !== session || claim.at !== at || claim.worker !== worker) return null;
    ctx.logger.warn({ path: entryPath }, 'claim reply lost; the claim had applied: adopted');
    return entry.stat.version;
  } catch {
    return null;
  }
}

/**
 * A claim refused because the task's working node exists: whether that node was no live
 * claim and is now removed (the task can be claimed again), or `false` when someone works
 * on the task.
 */
export async function removeFalseClaim(
  ctx: EngineContext,
  workingPath: string,
  session: string,
): Promise<boolean> {
  const { coordinator } = ctx;
  const stat = await coordinator.exists(workingPath).catch(() => null);
  // This session's own working node that no engine of this process holds: a lost claim reply
  // nobody adopted, or a settle that gave up. It would block the task for the session's
  // lifetime: remove it. (Held by another engine on this session: it is busy.)
  if (stat?.ephemeralOwner === session && !claimsHeldThrough(coordinator).has(workingPath)) {
    await coordinator.delete(workingPath).catch(() => undefined);
    return true;
  }
  // A persistent node is no claim: a claim's working node is ephemeral and goes with its
  // session. This one (written by hand, or recreated by an import of an export taken while
  // the task ran) would hold the task and its subtree forever. It is only a copy of a
  // claimer's identity, so it is removed (at the version seen) and the task claimed.
  if (stat && stat.ephemeralOwner === null) {
    ctx.logger.warn(
      { path: workingPath },
      'removing a persistent node in the working area: not a live claim',
    );
    await coordinator.delete(workingPath, stat.version).catch(() => undefined);
    return true;
  }
  return false;
}

/**
 * A refused claim multi: remembers why, and says `null` (try another candidate). `failure`
 * is the failed op of this claim's own ops (0: the entry's set, 1: the working node's
 * create, 2 and on: its ancestors' checks). `markBusy` is told of a task someone else works on.
 */
export async function claimRefused(
  ctx: EngineContext,
  err: unknown,
  failure: { index: number; code: string } | null,
  attempt: ClaimAttempt,
  markBusy: (encodedKey: string, workingPath: string, bucket: number) => void,
): Promise<null> {
  const { cand, bucket, workingPath } = attempt;
  const session = attempt.identity.session;
  if (failure?.index === 1 && failure.code === 'NODE_EXISTS') {
    if (await removeFalseClaim(ctx, workingPath, session)) bucket?.markStale();
    else markBusy(cand.entry.encodedKey, workingPath, cand.bucket);
    return null;
  }
  if (entryMoved(failure)) {
    bucket?.forgetEntry(cand.entry.name);
    return null;
  }
  // A guard: an ancestor was queued again (or removed) after it was read. The next listing
  // shows it; the child waits for it.
  if (failure !== null && failure.index >= 2) {
    bucket?.guardRefused();
    return null;
  }
  // A lost reply that did not apply: nothing was written; the next round tries again.
  if (UNKNOWN_OUTCOME_CODES.has(codeOf(err) ?? '')) {
    bucket?.markStale();
    return null;
  }
  throw err;
}

/**
 * Whether a claim was refused for its entry itself: changed or gone (claimed elsewhere,
 * cancelled, or renamed by a re-queue, which puts the task under a name the listing lacks).
 */
export function entryMoved(failure: { index: number; code: string } | null): boolean {
  return failure?.index === 0 && (failure.code === 'BAD_VERSION' || failure.code === 'NO_NODE');
}
