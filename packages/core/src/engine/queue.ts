import type { Op } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { KEY_SEPARATOR, type TaskKey, validateKey } from '../tree/keys.js';
import type { TaskInfo } from '../tree/task-map.js';
import type { EngineContext } from './context.js';
import { codeOf, multiFailure, taskStateError, UNKNOWN_OUTCOME_CODES } from './errors.js';
import { AREA, ENTRY_KIND, entryPrefix, parseEntryName, validatePriority } from './layout.js';
import { connectionBack } from './session.js';
import { queueTrace } from './task-spans.js';
import type { TraceCarrier } from './telemetry.js';
import type { BackoffOptions, EntryData, QueuedTask, QueueOptions } from './types.js';

/** A queue option set with defaults applied. */
export interface ResolvedQueueOptions {
  priority: number;
  maxAttempts: number;
  backoff: BackoffOptions;
  hints?: EntryData['hints'];
  notBefore?: number;
}

const HINT_FIELDS = ['server', 'filename', 'dataset'] as const;

/** Validates `queue` options; every problem is INVALID_TASK naming the field. */
export function resolveQueueOptions(
  ctx: EngineContext,
  options: QueueOptions | undefined,
): ResolvedQueueOptions {
  const given = options ?? {};
  const bad = (field: string, why: string) =>
    new ZoottError('INVALID_TASK', `options.${field}: ${why}`, { field: `options.${field}` });
  if (typeof given !== 'object') throw bad('', 'options must be an object');
  const known = new Set(['priority', 'hints', 'maxAttempts', 'backoff', 'notBefore']);
  for (const key of Object.keys(given))
    if (!known.has(key)) throw bad(key, `unknown option (allowed: ${[...known].join(', ')})`);
  const priority = validatePriority(given.priority ?? 0, 'options.priority');
  const maxAttempts = given.maxAttempts ?? ctx.defaults.maxAttempts;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 1000)
    throw bad('maxAttempts', `${String(maxAttempts)} must be an integer in [1, 1000]`);
  const backoff = { ...ctx.defaults.backoff, ...stripUndefined(given.backoff ?? {}) };
  for (const field of ['baseMs', 'maxMs'] as const) {
    const value = backoff[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw bad(`backoff.${field}`, `${String(value)} must be a finite number >= 0`);
  }
  const out: ResolvedQueueOptions = { priority, maxAttempts, backoff };
  if (given.hints !== undefined) {
    if (typeof given.hints !== 'object' || given.hints === null)
      throw bad('hints', 'must be an object');
    const hints: NonNullable<EntryData['hints']> = {};
    for (const key of Object.keys(given.hints)) {
      if (!(HINT_FIELDS as readonly string[]).includes(key))
        throw bad(`hints.${key}`, `unknown hint (allowed: ${HINT_FIELDS.join(', ')})`);
      const value = (given.hints as Record<string, unknown>)[key];
      if (value === undefined) continue;
      if (typeof value !== 'string' || value.length === 0 || value.length > 1024)
        throw bad(`hints.${key}`, 'must be a non-empty string of at most 1024 characters');
      hints[key as (typeof HINT_FIELDS)[number]] = value;
    }
    out.hints = hints;
  }
  if (given.notBefore !== undefined) {
    if (typeof given.notBefore !== 'number' || !Number.isFinite(given.notBefore))
      throw bad('notBefore', `${String(given.notBefore)} must be a time in ms since the epoch`);
    out.notBefore = given.notBefore;
  }
  return out;
}

function stripUndefined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}

function entryData(
  ctx: EngineContext,
  info: TaskInfo,
  name: string,
  opts: ResolvedQueueOptions,
  trace: TraceCarrier | undefined,
): EntryData {
  const data: EntryData = {
    name,
    type: info.type,
    attempts: 0,
    maxAttempts: opts.maxAttempts,
    backoff: opts.backoff,
    queuedAt: ctx.clock.now(),
  };
  if (info.data !== undefined) data.data = info.data;
  if (opts.hints) data.hints = opts.hints;
  if (opts.notBefore !== undefined) data.notBefore = opts.notBefore;
  if (trace) data.trace = trace;
  data.qid = ctx.queueIds.next(ctx.clock);
  return data;
}

/**
 * After a queue multi's reply was lost: waits for the connection, then looks for the entry
 * this call wrote (by its `qid`). Its path when the multi applied, `null` when it did not (the
 * caller then simply tries again). A connection that does not come back, or a look that does
 * not finish (the session ended meanwhile), rethrows `err`: the outcome is still unknown, and
 * the look's own error (SESSION_EXPIRED, say) would pass for a write that never happened.
 */
export async function lostQueueWrite(
  ctx: EngineContext,
  key: TaskKey,
  qid: string,
  err: unknown,
): Promise<string | null> {
  if (!(await connectionBack(ctx.coordinator))) throw err;
  const encodedKey = key.join(KEY_SEPARATOR);
  const bucket = ctx.layout.bucketPath(AREA.pending, ctx.layout.bucketOf(key));
  let names: string[];
  try {
    names = await ctx.coordinator.children(bucket);
  } catch {
    throw err;
  }
  for (const name of names) {
    if (parseEntryName(name)?.encodedKey !== encodedKey) continue;
    const path = `${bucket}/${name}`;
    // An entry gone since the listing is not this call's to find; any other failure leaves
    // the look unfinished: taken for "not written", the caller would write again, or report
    // a write that landed as one that never did.
    const got = await ctx.coordinator.get(path).catch((getError: unknown) => {
      if (codeOf(getError) === 'NO_NODE') return null;
      throw err;
    });
    if (got && decodeJson<Partial<EntryData>>(got.data, path).qid === qid) return path;
  }
  return null;
}

/** One new task as written: its tree node and its pending entry (marked with `qid`). */
export interface PreparedQueue {
  key: TaskKey;
  info: TaskInfo;
  treePath: string;
  treeData: Uint8Array;
  /** The entry's path without its sequence suffix. */
  prefix: string;
  entryBytes: Uint8Array;
  qid: string;
  /** The two creates of a new task, in one multi (or among others in a group). */
  ops: Op[];
}

/** What queueing `info` at `key` writes for a new task (carrying `trace`, its queue span's). */
export function prepareQueue(
  ctx: EngineContext,
  key: TaskKey,
  info: TaskInfo,
  opts: ResolvedQueueOptions,
  position?: number,
  trace?: TraceCarrier,
): PreparedQueue {
  validateKey(key, ctx.limits);
  const name = key[key.length - 1]!;
  const { layout } = ctx;
  const treePath = layout.treePath(key);
  const bucket = layout.bucketPath(AREA.pending, layout.bucketOf(key));
  const prefix = `${bucket}/${entryPrefix(ENTRY_KIND.queued, opts.priority, key.join(KEY_SEPARATOR))}`;
  const treeData = encodeJson({ name, type: info.type, data: info.data ?? null });
  const entry = entryData(ctx, info, name, opts, trace);
  if (position !== undefined) entry.qn = position;
  const entryBytes = encodeJson(entry);
  const ops: Op[] = [
    { op: 'create', path: treePath, data: treeData },
    { op: 'create', path: prefix, data: entryBytes, sequential: true },
  ];
  return { key, info, treePath, treeData, prefix, entryBytes, qid: entry.qid!, ops };
}

/**
 * Queues one task at `key`: ONE multi creating the tree node and the pending entry, or for
 * an existing tree node the re-queue rules of docs/protocol.md.
 */
export function queueAt(
  ctx: EngineContext,
  key: TaskKey,
  info: TaskInfo,
  opts: ResolvedQueueOptions,
): Promise<QueuedTask> {
  if (!ctx.telemetry) return queuePrepared(ctx, prepareQueue(ctx, key, info, opts));
  return queueTraced(ctx, key, info, opts);
}

/** {@link queueAt} inside its queue span, whose context the entry carries. */
async function queueTraced(
  ctx: EngineContext,
  key: TaskKey,
  info: TaskInfo,
  opts: ResolvedQueueOptions,
): Promise<QueuedTask> {
  const span = queueTrace(ctx.telemetry!, ctx.layout.world, key, info.type);
  try {
    const queued = await queuePrepared(
      ctx,
      prepareQueue(ctx, key, info, opts, undefined, span.carrier),
    );
    span.end();
    return queued;
  } catch (err) {
    span.end(err);
    throw err;
  }
}

/** {@link queueAt} of a task already prepared (validated, its data encoded). */
export async function queuePrepared(
  ctx: EngineContext,
  prepared: PreparedQueue,
): Promise<QueuedTask> {
  const { key, info, treePath, treeData, prefix, entryBytes, qid } = prepared;
  const { layout } = ctx;
  const encodedKey = key.join(KEY_SEPARATOR);
  const bucket = layout.bucketPath(AREA.pending, layout.bucketOf(key));
  // Before the write: the parent's completion here must know to look for this child.
  ctx.hints.noteChildQueued(key);
  for (let round = 0; round < 8; round++) {
    try {
      const res = await ctx.coordinator.multi(prepared.ops);
      return { key, entry: pathOf(res[1]), previous: null };
    } catch (err) {
      if (UNKNOWN_OUTCOME_CODES.has(codeOf(err) ?? '')) {
        const written = await lostQueueWrite(ctx, key, qid, err);
        if (written) return { key, entry: written, previous: null };
        continue;
      }
      const failure = multiFailure(err);
      if (failure?.index === 0 && failure.code === 'NO_NODE') {
        throw key.length === 1
          ? new ZoottError(
              'WORLD_NOT_INITIALISED',
              `world ${layout.world} is not initialised (no ${layout.root}); call init first`,
              { op: 'queue', path: treePath },
            )
          : new ZoottError(
              'NO_SUCH_TASK',
              `parent ${key.slice(0, -1).join(KEY_SEPARATOR)} does not exist in world ${layout.world}`,
              { op: 'queue', path: treePath },
            );
      }
      if (failure?.index === 1 && failure.code === 'NO_NODE')
        throw new ZoottError(
          'WORLD_NOT_INITIALISED',
          `world ${layout.world} is not initialised; call init`,
          {
            op: 'queue',
            path: bucket,
          },
        );
      if (!(failure?.index === 0 && failure.code === 'NODE_EXISTS')) throw err;
    }
    const done = await requeue(ctx, key, info, treeData, prefix, entryBytes, qid);
    if (done) return done;
  }
  throw new ZoottError('TASK_STATE', `task ${encodedKey}: too much contention, queue again`, {
    op: 'queue',
  });
}

export function pathOf(result: { op: string } | undefined): string {
  return result && 'path' in result ? (result as { path: string }).path : '';
}

/** One re-queue attempt; `null` when a concurrent change means it should be tried again. */
async function requeue(
  ctx: EngineContext,
  key: TaskKey,
  info: TaskInfo,
  treeData: Uint8Array,
  prefix: string,
  entryBytes: Uint8Array,
  qid: string,
): Promise<QueuedTask | null> {
  const { coordinator, layout } = ctx;
  const encodedKey = key.join(KEY_SEPARATOR);
  const treePath = layout.treePath(key);
  const bucket = layout.bucketPath(AREA.pending, layout.bucketOf(key));
  const [tree, names] = await Promise.all([
    coordinator
      .get(treePath)
      .catch((err) => (codeOf(err) === 'NO_NODE' ? null : Promise.reject(err))),
    coordinator.children(bucket),
  ]);
  if (!tree) return null; // deleted meanwhile: the create path runs again
  const existing = decodeJson<{ type?: string } | null>(tree.data, treePath);
  if (existing && typeof existing.type === 'string' && existing.type !== info.type) {
    throw new ZoottError(
      'INVALID_TASK',
      `task ${encodedKey} already exists with type ${JSON.stringify(existing.type)}; name + type is the unique key, so it cannot be queued with type ${JSON.stringify(info.type)} at the same place`,
      { field: 'type', op: 'queue', path: treePath },
    );
  }
  const entryName = names.find((n) => parseEntryName(n)?.encodedKey === encodedKey);
  const entry = entryName ? parseEntryName(entryName)! : null;
  const entryPath = entryName ? `${bucket}/${entryName}` : '';
  // The entry is read BEFORE the working node (one client's requests are served in order):
  // a claim that the working read misses has not bumped the version we delete with yet.
  const [entryStat, working, completed, failed] = await Promise.all([
    entry ? coordinator.exists(entryPath) : Promise.resolve(null),
    coordinator.exists(layout.recordPath(AREA.working, key)),
    coordinator.exists(layout.recordPath(AREA.completed, key)),
    coordinator.exists(layout.recordPath(AREA.failed, key)),
  ]);
  if (working) {
    throw taskStateError(
      key,
      'is being worked on; re-queue it after the attempt ends, or cancel it first',
      'queue',
    );
  }
  if (entry && !entryStat) return null;
  // The new entry before the deletes: a tree watch reports the ops one by one, and the task
  // must read as what it was until it reads as queued (never as gone in between; see
  // task-transitions.ts).
  // The entry says which tree node version this re-queue leaves (see `EntryData.treeVersion`).
  const written = decodeJson<EntryData>(entryBytes, prefix);
  written.treeVersion = tree.stat.version + 1;
  const ops: Op[] = [
    { op: 'set', path: treePath, data: treeData, version: tree.stat.version },
    { op: 'create', path: prefix, data: encodeJson(written), sequential: true },
  ];
  let previous: QueuedTask['previous'] = null;
  if (entry && entryStat) {
    ops.push({ op: 'delete', path: entryPath, version: entryStat.version });
    previous = entry.kind === ENTRY_KIND.dead ? 'failed' : 'pending';
  }
  if (failed)
    ops.push({ op: 'delete', path: layout.recordPath(AREA.failed, key), version: failed.version });
  if (completed) {
    ops.push({
      op: 'delete',
      path: layout.recordPath(AREA.completed, key),
      version: completed.version,
    });
    previous = 'completed';
  }
  try {
    const res = await coordinator.multi(ops);
    return { key, entry: pathOf(res[1]), previous };
  } catch (err) {
    const code = codeOf(err);
    if (code && UNKNOWN_OUTCOME_CODES.has(code)) {
      const written = await lostQueueWrite(ctx, key, qid, err);
      return written ? { key, entry: written, previous } : null;
    }
    if (code === 'BAD_VERSION' || code === 'NO_NODE' || code === 'NODE_EXISTS') return null;
    throw err;
  }
}
