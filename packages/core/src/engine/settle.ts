import type { Op, OpResult } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import { backoffDelay } from './clock.js';
import type { EngineContext } from './context.js';
import { codeOf, multiFailure, toTaskError, UNKNOWN_OUTCOME_CODES } from './errors.js';
import { AREA, ENTRY_KIND, type EntryKind, entryPrefix, parseEntryName } from './layout.js';
import { sessionBack } from './session.js';
import { recordCarrier } from './task-spans.js';
import type {
  Claim,
  CompletedRecord,
  EntryData,
  FailedRecord,
  SettleOutcome,
  TaskError,
  TaskProgress,
} from './types.js';

/**
 * Ending a claim: complete, fail (retry or dead letter) or release, each ONE multi.
 *
 * The fence is the claimed entry: every settle multi deletes or sets it by the exact path and
 * version the claim wrote. Every later claim of the task bumps that version (a claim is a
 * `set`), and a settle, retry, re-queue or cancel deletes or renames it (sequential names are
 * never reused), so a claim that is no longer the task's current one is refused there. The
 * working node goes in the same multi but fences nothing: it is never written after its
 * create (its version is always 0) and the next claim of the task recreates it at the same
 * path, even from the same session. A claimer whose session ended is refused by the server,
 * and before that locally ({@link fenced}).
 */

function fenced(ctx: EngineContext, claim: Claim, op: string): SettleOutcome | null {
  const now = ctx.coordinator.sessionId;
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

/** Re-issues of one settle multi after lost replies before giving up (while connected). */
const MAX_REISSUES = 8;

/** A re-issued settle multi was refused: an earlier, lost attempt may have applied it. */
class RefusedAfterLoss {
  constructor(readonly error: unknown) {}
}

/**
 * Runs a settle multi until its outcome is known. A lost reply leaves that open, and giving
 * up then would strand the task: if the multi did not apply, the claim's working node lives
 * on with the session and no one ever settles it (the long chaos run caught a worker doing
 * just that). So the same multi goes out again once the session is connected again. It is
 * fenced on the claimed entry's version, so it applies exactly once: the retry either applies
 * it now or is refused because the entry moved on (an earlier attempt applied it, or the task
 * was cancelled), which is returned as {@link RefusedAfterLoss} for the caller to tell apart.
 * A lost session ends it with SESSION_EXPIRED, like any fenced claim. `lostBefore` counts
 * replies already lost for this very write (a group commit whose reply was lost).
 */
async function multiUntilKnown(
  ctx: EngineContext,
  claim: Claim,
  ops: readonly Op[],
  lostBefore = 0,
): Promise<OpResult[] | RefusedAfterLoss> {
  for (let lost = lostBefore; ; lost++) {
    try {
      return await ctx.coordinator.multi(ops);
    } catch (err) {
      const code = codeOf(err);
      if (lost > 0 && code && VOID_CODES.has(code) && code !== 'SESSION_EXPIRED')
        return new RefusedAfterLoss(err);
      if (!code || !UNKNOWN_OUTCOME_CODES.has(code) || lost >= MAX_REISSUES) throw err;
      ctx.logger.warn(
        { key: claim.key.join(KEY_SEPARATOR), code, reissue: lost + 1 },
        'settle reply lost: re-issuing once the session is connected',
      );
      if (!(await sessionBack(ctx.coordinator, claim.session)))
        throw new ZoottError('SESSION_EXPIRED', 'the session ended while a settle reply was lost');
      // Still connected after a timeout: do not hammer a slow server.
      if (code === 'OPERATION_TIMEOUT') await ctx.clock.sleep(Math.min(2000, 100 * 2 ** lost));
    }
  }
}

/**
 * Runs a settle multi; a void claim becomes `dropped`, anything else is thrown. After a lost
 * reply, `appliedEarlier` says whether a refused re-issue means the lost attempt applied.
 */
async function settleMulti(
  ctx: EngineContext,
  claim: Claim,
  op: string,
  ops: readonly Op[],
  ok: SettleOutcome,
  appliedEarlier: () => Promise<boolean> = async () => false,
  lostBefore = 0,
): Promise<SettleOutcome> {
  const blocked = fenced(ctx, claim, op);
  if (blocked) return blocked;
  try {
    const out = await multiUntilKnown(ctx, claim, ops, lostBefore);
    if (!(out instanceof RefusedAfterLoss)) return ok;
    return (await appliedEarlier()) ? ok : dropped(ctx, claim, op, out.error);
  } catch (err) {
    return voidOrThrow(ctx, claim, op, err);
  }
}

/** Whether the completed record is the one this claim wrote (by a lost, applied attempt). */
async function ownRecordExists(ctx: EngineContext, claim: Claim): Promise<boolean> {
  try {
    const { data } = await ctx.coordinator.get(ctx.layout.recordPath(AREA.completed, claim.key));
    const rec = decodeJson<Partial<CompletedRecord>>(data);
    return (
      rec.worker === claim.worker &&
      rec.attempts === claim.attempt &&
      rec.startedAt === claim.startedAt
    );
  } catch {
    return false;
  }
}

/** The kinds of entry a claimed task goes back to the pending area as. */
type ReenteredKind = Exclude<EntryKind, typeof ENTRY_KIND.queued>;

/**
 * Whether the bucket holds a new entry of `kind` for this task (a lost re-entry that applied);
 * the claimed entry itself may be of that kind too (a retry of a retry) and does not count.
 */
async function reentered(ctx: EngineContext, claim: Claim, kind: ReenteredKind): Promise<boolean> {
  const own = claim.entryPath.slice(claim.entryPath.lastIndexOf('/') + 1);
  const encodedKey = claim.key.join(KEY_SEPARATOR);
  try {
    const bucket = ctx.layout.bucketPath(AREA.pending, ctx.layout.bucketOf(claim.key));
    return (await ctx.coordinator.children(bucket)).some((name) => {
      const entry = name === own ? null : parseEntryName(name);
      return entry !== null && entry.kind === kind && entry.encodedKey === encodedKey;
    });
  } catch {
    return false;
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
  /**
   * What the task reported (`ctx.progress` / `ctx.log`), kept in the completed record as
   * `report` when the record still fits under the size limit with it (else left out). A
   * report that is not JSON is refused (`INVALID_TASK`, field `report`) before anything is
   * written: the claim stays held.
   */
  report?: TaskProgress;
  /**
   * Hand-off: this engine's own claimer (the one behind `claim`) may claim, in the
   * completion's multi, a child this completion makes runnable, when `claim` would return it
   * next anyway (docs/protocol.md, "Group commit"). The outcome's `next` is then that claim,
   * the caller's to run and settle. Ignored with `extraOps`.
   */
  handOff?: boolean;
}

/**
 * What became of `extraOps`: committed with the record (their results, in order; `null` when
 * an attempt whose reply was lost committed them) or left out.
 */
export type ExtraOpsOutcome =
  | { applied: true; results: OpResult[] | null }
  | { applied: false; error: unknown };

/** The outcome of `complete`: `extras` is set when `extraOps` were given and the task completed. */
export type CompleteOutcome = SettleOutcome & {
  extras?: ExtraOpsOutcome;
  /** The child claimed in the same multi (`handOff`). */
  next?: Claim;
};

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
 * The completed record of `claim` as stored, or why it cannot be stored (not JSON, too large:
 * the attempt is then failed with that error instead). `at` is its completion time when the
 * caller has read the clock already (the stamp of a child claimed in the same multi).
 */
export function completedRecordBytes(
  ctx: EngineContext,
  claim: Claim,
  result: unknown,
  report?: TaskProgress,
  at: number = ctx.clock.now(),
): Uint8Array | TaskError {
  const record: CompletedRecord = {
    name: claim.name,
    type: claim.type,
    attempts: claim.attempt,
    worker: claim.worker,
    queuedAt: claim.entry.queuedAt,
    startedAt: claim.startedAt,
    completedAt: at,
    treeVersion: claim.entry.treeVersion ?? 0,
  };
  // JSON leaves a function or symbol out without a word: the result would be lost unsaid.
  if (typeof result === 'function' || typeof result === 'symbol')
    return { code: 'RESULT_NOT_JSON', message: `result is not JSON: a ${typeof result}` };
  if (result !== undefined) record.result = result;
  // The run's trace, for children queued without one (see task-spans.ts).
  const trace = ctx.telemetry ? recordCarrier(ctx.telemetry, claim) : undefined;
  if (trace) record.trace = trace;
  let bytes: Uint8Array;
  try {
    bytes = encodeJson(record);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { code: 'RESULT_NOT_JSON', message: `result is not JSON: ${why}` };
  }
  // The report rides along only when it leaves the result room: it never fails a task.
  // A report that is not JSON is the caller's bad input: said so, before anything is written.
  if (report) {
    let withReport: Uint8Array;
    try {
      withReport = encodeJson({ ...record, report });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new ZoottError('INVALID_TASK', `report is not JSON: ${why}`, { field: 'report' });
    }
    if (withReport.length <= ctx.maxRecordBytes) bytes = withReport;
  }
  if (bytes.length > ctx.maxRecordBytes)
    return {
      message: `result is ${bytes.length} bytes of JSON, more than the limit of ${ctx.maxRecordBytes}`,
      code: 'DATA_TOO_LARGE',
    };
  return bytes;
}

/** The ops that complete `claim`: create the record, delete the claimed entry and the claim. */
export function completionOps(ctx: EngineContext, claim: Claim, record: Uint8Array): Op[] {
  return [
    { op: 'create', path: ctx.layout.recordPath(AREA.completed, claim.key), data: record },
    { op: 'delete', path: claim.entryPath, version: claim.entryVersion },
    { op: 'delete', path: claim.workingPath },
  ];
}

/**
 * Completes one claim with its own multi. `lostBefore`: the claim was part of a group commit
 * whose reply was lost, so a refusal may mean that commit applied (the record then says so).
 */
export function completeAlone(
  ctx: EngineContext,
  claim: Claim,
  record: Uint8Array,
  lostBefore = false,
): Promise<SettleOutcome> {
  return settleMulti(
    ctx,
    claim,
    'complete',
    completionOps(ctx, claim, record),
    { status: 'completed' },
    () => ownRecordExists(ctx, claim),
    lostBefore ? 1 : 0,
  );
}

/**
 * Records a result with `extra` ops in the same multi: create completed + delete entry
 * @claimed version + delete working, then the extras. Extras that make the multi fail are
 * dropped (with a warning) and the completion is recorded without them: a result is never
 * lost to them. `lostBefore`: the claim was part of a group commit whose reply was lost, so
 * a refusal may mean that commit applied (the own record then says so).
 */
export async function completeWithExtras(
  ctx: EngineContext,
  claim: Claim,
  record: Uint8Array,
  extra: readonly Op[],
  lostBefore = false,
): Promise<CompleteOutcome> {
  const base = completionOps(ctx, claim, record);
  const applied = () => ownRecordExists(ctx, claim);
  const blocked = fenced(ctx, claim, 'complete');
  if (blocked) return blocked;
  let error: unknown;
  try {
    const out = await multiUntilKnown(ctx, claim, [...base, ...extra], lostBefore ? 1 : 0);
    if (!(out instanceof RefusedAfterLoss))
      return { status: 'completed', extras: { applied: true, results: out.slice(base.length) } };
    // A lost attempt applied the record and the extras together; their results are unknown.
    if (await applied()) return { status: 'completed', extras: { applied: true, results: null } };
    // Refused for an extra op: the base ops passed, so no attempt applied and the claim holds.
    if (!extrasAtFault(out.error, base.length)) return dropped(ctx, claim, 'complete', out.error);
    error = out.error;
  } catch (err) {
    if (!extrasAtFault(err, base.length)) return voidOrThrow(ctx, claim, 'complete', err);
    error = err;
  }
  ctx.logger.warn(
    { key: claim.key.join(KEY_SEPARATOR), error: String(error) },
    'completing without the extra ops: they made the completion multi fail',
  );
  const out = await settleMulti(ctx, claim, 'complete', base, { status: 'completed' }, applied);
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
  const base = { ...freshEntry(claim), attempts: claim.attempt, lastError: taskError };
  if (claim.attempt >= claim.maxAttempts) {
    return deadLetter(ctx, claim, base, taskError, priority);
  }
  const delay = backoffDelay(claim.attempt, claim.entry.backoff, () => ctx.clock.random());
  const notBefore = ctx.clock.now() + delay;
  const retry: EntryData = { ...base, notBefore };
  return reenter(ctx, claim, ENTRY_KIND.retry, priority, retry, [], {
    status: 'retrying',
    notBefore,
    attempt: claim.attempt,
    error: taskError,
  });
}

/**
 * ONE multi that ends an attempt by putting the task back in its bucket under a new entry
 * name (r = retry, x = dead): fenced on the claimed entry version.
 */
function reenter(
  ctx: EngineContext,
  claim: Claim,
  kind: ReenteredKind,
  priority: number,
  data: EntryData,
  extra: Op[],
  outcome: SettleOutcome,
): Promise<SettleOutcome> {
  const bucket = ctx.layout.bucketPath(AREA.pending, ctx.layout.bucketOf(claim.key));
  const entryName = entryPrefix(kind, priority, claim.key.join(KEY_SEPARATOR));
  // The new entry's name is sequential: a lost attempt that applied left one of its kind.
  const applied = () => reentered(ctx, claim, kind);
  return settleMulti(
    ctx,
    claim,
    'fail',
    [
      { op: 'delete', path: claim.entryPath, version: claim.entryVersion },
      { op: 'create', path: `${bucket}/${entryName}`, data: encodeJson(data), sequential: true },
      ...extra,
      { op: 'delete', path: claim.workingPath },
    ],
    outcome,
    applied,
  );
}

function deadLetter(
  ctx: EngineContext,
  claim: Claim,
  base: EntryData,
  error: TaskError,
  priority: number,
): Promise<SettleOutcome> {
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
    ENTRY_KIND.dead,
    priority,
    dead,
    [
      {
        op: 'create',
        path: ctx.layout.recordPath(AREA.failed, claim.key),
        data: encodeJson(record),
      },
    ],
    { status: 'failed', error },
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
      {
        op: 'set',
        path: claim.entryPath,
        data: encodeJson(restored),
        version: claim.entryVersion,
      },
      { op: 'delete', path: claim.workingPath },
    ],
    { status: 'dropped', reason: 'released' },
  );
}
