import type { Op, OpResult } from '../contract/coordinator.js';
import { encodeJson } from '../contract/paths.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { entryPrefix, parseEntryName } from './layout.js';
import { backoffDelay, codeOf, multiFailure, toTaskError } from './support.js';
import type {
  Claim,
  CompletedRecord,
  EntryData,
  FailedRecord,
  SettleOutcome,
  TaskError,
} from './types.js';

/**
 * Ending a claim: complete, fail (retry or dead letter) or release. Each is ONE multi that
 * starts with a check on the claimer's own working node, so a claimer that lost its
 * session, or whose task was cancelled or re-claimed, can never write (fencing).
 */

function fenced(ctx: EngineContext, claim: Claim, op: string): SettleOutcome | null {
  const now = ctx.c.sessionId;
  if (now !== claim.session) {
    const reason = `claim belongs to session ${claim.session}, the coordinator is now in ${now ?? 'no session'}`;
    ctx.logger.warn({ key: claim.key.join(KEY_SEPARATOR), op, reason }, 'result dropped: fenced');
    return { status: 'dropped', reason };
  }
  return null;
}

function dropped(ctx: EngineContext, claim: Claim, op: string, err: unknown): SettleOutcome {
  const reason = `the claim is no longer held (${codeOf(err) ?? String(err)})`;
  ctx.logger.warn(
    { key: claim.key.join(KEY_SEPARATOR), op, reason, error: String(err) },
    'result dropped: fenced',
  );
  return { status: 'dropped', reason };
}

/** Codes that mean "this claim is void": never retried, the result is dropped. */
const VOID_CODES = new Set(['SESSION_EXPIRED', 'NO_NODE', 'BAD_VERSION', 'NODE_EXISTS', 'CLOSED']);

/** Runs a settle multi; a void claim becomes `dropped`, anything else is thrown. */
async function settleMulti(
  ctx: EngineContext,
  claim: Claim,
  op: string,
  ops: readonly Op[],
  ok: SettleOutcome,
): Promise<SettleOutcome> {
  const blocked = fenced(ctx, claim, op);
  if (blocked) return blocked;
  try {
    await ctx.c.multi(ops);
    return ok;
  } catch (err) {
    return voidOrThrow(ctx, claim, op, err);
  }
}

/** A failed settle multi: `dropped` when the error voids the claim, else the error again. */
function voidOrThrow(ctx: EngineContext, claim: Claim, op: string, err: unknown): SettleOutcome {
  const code = codeOf(err);
  if (code && VOID_CODES.has(code)) return dropped(ctx, claim, op, err);
  throw err;
}

/** The base entry data without claim bookkeeping, for a renamed entry. */
function freshEntry(claim: Claim): EntryData {
  const { claim: _held, ...rest } = claim.entry;
  return rest;
}

/** Options of `Engine.complete`. */
export interface CompleteOptions {
  /**
   * Ops appended to the completion multi: they commit together with the completed record,
   * or not at all. The parents of nodes they create must exist beforehand (a multi cannot
   * create them on the way). When the multi fails because of these ops, the task is
   * completed without them; the outcome's `extras` says so.
   */
  extraOps?: readonly Op[];
}

/** What became of `extraOps`: committed with the record (their results, in order) or left out. */
export type ExtraOpsOutcome =
  | { applied: true; results: OpResult[] }
  | { applied: false; error: unknown };

/** The outcome of `complete`: `extras` is set when `extraOps` were given and the task completed. */
export type CompleteOutcome = SettleOutcome & { extras?: ExtraOpsOutcome };

/**
 * Errors that a client refuses a request with before sending it: the multi certainly did
 * not apply, and the base ops alone passed the same checks, so the extras are to blame.
 */
const REFUSED_BEFORE_SENDING = new Set(['DATA_TOO_LARGE', 'BAD_ARGUMENTS', 'INVALID_PATH']);

/**
 * Whether a failed completion multi failed because of its extra ops (the ops from index
 * `baseCount` on): a server verdict on one of them, or a refusal of the whole request
 * that the base ops alone would not get (too large together). A verdict on a base op is
 * fencing and connection trouble leaves the outcome unknown: neither allows a retry.
 */
function extrasAtFault(err: unknown, baseCount: number): boolean {
  const failure = multiFailure(err);
  if (!failure) return false;
  if (failure.index >= 0) return failure.index >= baseCount;
  return REFUSED_BEFORE_SENDING.has(failure.code);
}

/**
 * Records a result: check working + create completed + delete entry + delete working,
 * plus any `extraOps` in the same multi. Extras that make the multi fail are dropped (with
 * a warning) and the completion is recorded without them: a result is never lost to them.
 */
export async function completeClaim(
  ctx: EngineContext,
  claim: Claim,
  result: unknown,
  options: CompleteOptions = {},
): Promise<CompleteOutcome> {
  const record: CompletedRecord = {
    name: claim.name,
    type: claim.type,
    attempts: claim.attempt,
    worker: claim.worker,
    queuedAt: claim.entry.queuedAt,
    startedAt: claim.startedAt,
    completedAt: ctx.clock.now(),
  };
  if (result !== undefined) record.result = result;
  let bytes: Uint8Array;
  try {
    bytes = encodeJson(record);
  } catch (err) {
    return failClaim(ctx, claim, { message: `result is not JSON: ${(err as Error).message}` });
  }
  if (bytes.length > ctx.maxRecordBytes) {
    return failClaim(ctx, claim, {
      message: `result is ${bytes.length} bytes of JSON, more than the limit of ${ctx.maxRecordBytes}`,
      code: 'DATA_TOO_LARGE',
    });
  }
  const base: Op[] = [
    { op: 'check', path: claim.workingPath, version: 0 },
    { op: 'create', path: ctx.layout.recordPath('c', claim.key), data: bytes },
    { op: 'delete', path: claim.entryPath, version: claim.entryVersion },
    { op: 'delete', path: claim.workingPath, version: 0 },
  ];
  const extra = options.extraOps ?? [];
  if (extra.length === 0) return settleMulti(ctx, claim, 'complete', base, { status: 'completed' });
  const blocked = fenced(ctx, claim, 'complete');
  if (blocked) return blocked;
  let error: unknown;
  try {
    const results = await ctx.c.multi([...base, ...extra]);
    return { status: 'completed', extras: { applied: true, results: results.slice(base.length) } };
  } catch (err) {
    if (!extrasAtFault(err, base.length)) return voidOrThrow(ctx, claim, 'complete', err);
    error = err;
  }
  ctx.logger.warn(
    { key: claim.key.join(KEY_SEPARATOR), error: String(error) },
    'completing without the extra ops: they made the completion multi fail',
  );
  const out = await settleMulti(ctx, claim, 'complete', base, { status: 'completed' });
  return out.status === 'completed' ? { ...out, extras: { applied: false, error } } : out;
}

/**
 * Records a failed attempt. With attempts left the entry is renamed to an `r` entry whose
 * `notBefore` carries the backoff; after the last one it becomes an `x` entry (which keeps
 * the descendants blocked) plus a failed record.
 */
export async function failClaim(
  ctx: EngineContext,
  claim: Claim,
  error: unknown,
): Promise<SettleOutcome> {
  const taskError = toTaskError(error);
  const parsed = parseEntryName(claim.entryPath.slice(claim.entryPath.lastIndexOf('/') + 1));
  const priority = parsed?.priority ?? 0;
  const encodedKey = claim.key.join(KEY_SEPARATOR);
  const base = { ...freshEntry(claim), attempts: claim.attempt, lastError: taskError };
  if (claim.attempt >= claim.maxAttempts) {
    return deadLetter(ctx, claim, base, taskError, priority);
  }
  const delay = backoffDelay(claim.attempt, claim.entry.backoff, () => ctx.clock.random());
  const notBefore = ctx.clock.now() + delay;
  const retry: EntryData = { ...base, notBefore };
  return reenter(ctx, claim, entryPrefix('r', priority, encodedKey), retry, [], {
    status: 'retrying',
    notBefore,
    attempt: claim.attempt,
  });
}

/**
 * ONE multi that ends an attempt by putting the task back in its bucket under a new entry
 * name (r = retry, x = dead): fenced on the own working node and the claimed entry version.
 */
function reenter(
  ctx: EngineContext,
  claim: Claim,
  entryName: string,
  data: EntryData,
  extra: Op[],
  outcome: SettleOutcome,
): Promise<SettleOutcome> {
  const bucket = ctx.layout.bucketPath('p', ctx.layout.bucketOf(claim.key));
  return settleMulti(
    ctx,
    claim,
    'fail',
    [
      { op: 'check', path: claim.workingPath, version: 0 },
      { op: 'delete', path: claim.entryPath, version: claim.entryVersion },
      { op: 'create', path: `${bucket}/${entryName}`, data: encodeJson(data), sequential: true },
      ...extra,
      { op: 'delete', path: claim.workingPath, version: 0 },
    ],
    outcome,
  );
}

function deadLetter(
  ctx: EngineContext,
  claim: Claim,
  base: EntryData,
  error: TaskError,
  priority: number,
): Promise<SettleOutcome> {
  const encodedKey = claim.key.join(KEY_SEPARATOR);
  const record: FailedRecord = {
    name: claim.name,
    type: claim.type,
    error,
    attempts: claim.attempt,
    worker: claim.worker,
    queuedAt: claim.entry.queuedAt,
    failedAt: ctx.clock.now(),
  };
  const { notBefore: _nb, ...dead } = base;
  return reenter(
    ctx,
    claim,
    entryPrefix('x', priority, encodedKey),
    dead,
    [{ op: 'create', path: ctx.layout.recordPath('f', claim.key), data: encodeJson(record) }],
    { status: 'failed' },
  );
}

/**
 * Gives a claim back without counting the attempt (a worker stopping before it ran or
 * finished the task): the entry gets its attempt count back and the working node goes.
 */
export async function releaseClaim(ctx: EngineContext, claim: Claim): Promise<SettleOutcome> {
  const restored: EntryData = { ...freshEntry(claim), attempts: claim.attempt - 1 };
  return settleMulti(
    ctx,
    claim,
    'release',
    [
      { op: 'check', path: claim.workingPath, version: 0 },
      {
        op: 'set',
        path: claim.entryPath,
        data: encodeJson(restored),
        version: claim.entryVersion,
      },
      { op: 'delete', path: claim.workingPath, version: 0 },
    ],
    { status: 'dropped', reason: 'released' },
  );
}
