import type { Op } from '../contract/coordinator.js';
import { encodeJson } from '../contract/paths.js';
import type { EngineContext } from '../engine/context.js';
import { AREA } from '../engine/layout.js';
import type { ClaimIdentity, EntryData } from '../engine/types.js';
import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';
import type { BucketListings, BucketState } from './bucket-listings.js';
import type { Candidate } from './candidate.js';
import type { ClaimerOptions } from './claimer-options.js';

/** One claim being made: the candidate and what its multi writes. */
export interface ClaimAttempt {
  cand: Candidate;
  /** The candidate's bucket as listed here (gone when its listing was dropped meanwhile). */
  bucket: BucketState | undefined;
  key: TaskKey;
  entryPath: string;
  workingPath: string;
  identity: ClaimIdentity;
  claimed: EntryData;
  ops: Op[];
}

/** What claiming `cand` writes, for `session` at `now`. */
export function claimAttempt(
  ctx: EngineContext,
  opts: Pick<ClaimerOptions, 'worker' | 'host' | 'pid'>,
  listings: BucketListings,
  cand: Candidate,
  session: string,
  now: number,
): ClaimAttempt {
  const key = cand.entry.encodedKey.split(KEY_SEPARATOR);
  const entryPath = `${listings.pendingPath(cand.bucket)}/${cand.entry.name}`;
  const entryData = cand.cached.data;
  // Attempts are counted at claim time, so a task whose workers all died while running it
  // arrives here with no attempt left: it is claimed (proving nobody runs it now) and
  // dead-lettered at once, so a task that kills its worker cannot loop forever.
  const exhausted = entryData.attempts >= entryData.maxAttempts;
  const identity: ClaimIdentity = { worker: opts.worker, session, at: now };
  if (opts.host !== undefined) identity.host = opts.host;
  if (opts.pid !== undefined) identity.pid = opts.pid;
  const claimed: EntryData = {
    ...entryData,
    attempts: exhausted ? entryData.attempts : entryData.attempts + 1,
    claim: identity,
  };
  const workingPath = ctx.layout.recordPath(AREA.working, key);
  // The entry's version is the fence: a cached entry that changed since it was read (claimed
  // by a worker that died, given back) is refused and read again, so no count is lost. A
  // child's claim also checks its ancestors' tree nodes (see `ancestorGuards`).
  const ops: Op[] = [
    { op: 'set', path: entryPath, data: encodeJson(claimed), version: cand.cached.version },
    { op: 'create', path: workingPath, data: encodeJson(identity), ephemeral: true },
  ];
  // A root's claim (most of them) has no guards: no empty array spread per claim.
  if (cand.guards !== undefined) for (const guard of cand.guards) ops.push(guard);
  const bucket = listings.get(cand.bucket);
  return { cand, bucket, key, entryPath, workingPath, identity, claimed, ops };
}
