import { isZoottError, ZoottError } from '../contract/errors.js';
import { JUTE_MAX_BUFFER } from '../contract/request-size.js';
import { childNamesFor } from '../tree/functors.js';
import { KEY_SEPARATOR, validateKey } from '../tree/keys.js';
import { validateTaskInfo } from '../tree/names.js';
import type { EngineContext } from './context.js';
import { codeOf, multiFailure, UNKNOWN_OUTCOME_CODES } from './errors.js';
import { AREA, parseEntryName } from './layout.js';
import { multiFrameBytes } from './multi-frame.js';
import {
  lostQueueWrite,
  type PreparedQueue,
  pathOf,
  prepareQueue,
  queuePrepared,
  resolveQueueOptions,
} from './queue.js';
import { splitRequest } from './queue-request.js';
import { connectionBack } from './session.js';
import { type QueueTrace, queueTrace } from './task-spans.js';
import type { QueuedTask } from './types.js';

/** Most tasks in one queue multi (two creates each). */
export const MAX_QUEUE_GROUP = 500;
/**
 * Request bytes one queue multi aims to stay under: half of ZooKeeper's request limit, so a
 * chroot in front of every path (the engine does not know it) still fits with room to spare.
 * A client with a smaller limit refuses the request before sending it; the group is then split.
 */
const QUEUE_FRAME_BUDGET = Math.floor(JUTE_MAX_BUFFER / 2);
/** Re-sends of one group whose replies were lost before the call gives up. */
const MAX_LOST_ROUNDS = 8;

interface Item extends PreparedQueue {
  /** Index in the caller's array, for errors. */
  index: number;
  bytes: number;
  result?: QueuedTask;
}

/**
 * Why a `queueMany` call stopped, and how far it got: the first `queued` requests are queued;
 * the `uncertain` after them were sent in one write whose reply never came (its session
 * ended, or the connection did not come back to look): a multi is all or nothing, so all of
 * them landed or none did; the rest were never sent. `field` names the request it stopped at.
 */
export class QueueManyError extends ZoottError {
  readonly queued: number;
  readonly uncertain: number;

  constructor(cause: ZoottError, index: number, queued: number, uncertain: number) {
    const text = cause.message.startsWith(`${cause.code}: `)
      ? cause.message.slice(cause.code.length + 2)
      : cause.message;
    const parts = [
      queued === 0 ? 'nothing before it was queued' : `tasks[0..${queued - 1}] were queued`,
    ];
    if (uncertain > 0)
      parts.push(
        `tasks[${queued}..${queued + uncertain - 1}] may or may not be (the reply was lost)`,
      );
    parts.push(`tasks[${queued + uncertain}..] were not`);
    super(cause.code, `tasks[${index}]: ${text}; ${parts.join(', ')}`, {
      field: `tasks[${index}]${cause.field ? `.${cause.field}` : ''}`,
      ...(cause.path ? { path: cause.path } : {}),
      ...(cause.op ? { op: cause.op } : {}),
      cause,
    });
    this.name = 'QueueManyError';
    this.queued = queued;
    this.uncertain = uncertain;
  }
}

/** `err` about request `index`, saying how far the call got; other errors pass unchanged. */
function aboutTask(err: unknown, index: number, queued: number, uncertain = 0): unknown {
  return isZoottError(err) ? new QueueManyError(err, index, queued, uncertain) : err;
}

/** Validates one request of `queueMany` and prepares its writes; throws what is wrong. */
function prepare(ctx: EngineContext, request: unknown, index: number, spans: QueueTrace[]): Item {
  if (typeof request !== 'object' || request === null || Array.isArray(request))
    throw new ZoottError('INVALID_TASK', 'must be an object {name, type, data, ...}', {
      field: 'task',
    });
  const split = splitRequest(request as Record<string, unknown>);
  const info = validateTaskInfo(split.taskInfo, ctx.limits);
  const opts = resolveQueueOptions(ctx, split.options);
  const parent = split.parent;
  let key = [info.name];
  if (parent !== null && parent !== undefined) {
    if (!('key' in parent))
      throw new ZoottError(
        'INVALID_TASK',
        'parent: queueMany takes an exact parent ({ key }) or none; queue under a pattern with queue()',
        { field: 'parent' },
      );
    const parentKey = validateKey(parent.key, ctx.limits);
    const [child] = childNamesFor(
      [{ name: parentKey[parentKey.length - 1]! }],
      info.name,
      split.nameFunctor ?? undefined,
      ctx.limits,
    );
    key = [...parentKey, child!];
    // Before the write: the parent's completion here must know to look for this child.
    ctx.hints.noteChildQueued(key);
  } else if (split.nameFunctor)
    throw new ZoottError('INVALID_TASK', 'childName: only applies with a parent', {
      field: 'childName',
    });
  const span = ctx.telemetry ? queueTrace(ctx.telemetry, ctx.layout.world, key, info.type) : null;
  if (span) spans.push(span);
  const prepared = prepareQueue(ctx, key, info, opts, index, span?.carrier);
  return { ...prepared, index, bytes: multiFrameBytes(prepared.ops) };
}

/**
 * Queues many tasks, in order, in as few multis as fit: up to {@link MAX_QUEUE_GROUP} tasks
 * and half of ZooKeeper's request limit per multi (a task's two creates always share one).
 * Every request is checked before anything is written. A task that exists already (a
 * re-queue), or whose write is refused, is queued on its own by the rules of `queue`, and the
 * group goes on without it; a refusal that `queue` would throw ends the call with an error
 * naming the task and what was queued before it.
 */
export async function queueManyAt(
  ctx: EngineContext,
  requests: readonly unknown[],
): Promise<QueuedTask[]> {
  if (!Array.isArray(requests))
    throw new ZoottError('INVALID_TASK', 'tasks: must be an array of queue requests', {
      field: 'tasks',
    });
  // Each task's queue span ends when the call does: with the error for the tasks not queued.
  const spans: QueueTrace[] = [];
  try {
    const queued = await queueAll(ctx, requests, spans);
    for (const span of spans) span.end();
    return queued;
  } catch (err) {
    const queued = err instanceof QueueManyError ? err.queued : 0;
    spans.forEach((span, index) => {
      span.end(index < queued ? undefined : err);
    });
    throw err;
  }
}

async function queueAll(
  ctx: EngineContext,
  requests: readonly unknown[],
  spans: QueueTrace[],
): Promise<QueuedTask[]> {
  const items = requests.map((request, index) => {
    try {
      return prepare(ctx, request, index, spans);
    } catch (err) {
      throw aboutTask(err, index, 0);
    }
  });
  let start = 0;
  while (start < items.length) {
    let end = start;
    let bytes = 0;
    while (end < items.length && end - start < MAX_QUEUE_GROUP) {
      if (end > start && bytes + items[end]!.bytes > QUEUE_FRAME_BUDGET) break;
      bytes += items[end]!.bytes;
      end++;
    }
    await writeGroup(ctx, items.slice(start, end));
    start = end;
  }
  return items.map((it) => it.result!);
}

/** Codes of a refusal made before anything was sent: the request is too large for the client. */
const REFUSED_AS_TOO_LARGE: ReadonlySet<string> = new Set(['BAD_ARGUMENTS', 'DATA_TOO_LARGE']);
/** Codes of a session that ended: a write in flight then may or may not have been applied. */
const SESSION_ENDED: ReadonlySet<string> = new Set(['SESSION_EXPIRED', 'CLOSED', 'AUTH_FAILED']);

/**
 * Whether a write that failed with `err` may have been applied: its reply was lost, or its
 * session ended while it was out (`before`: the coordinator's state when it was sent; one
 * already lost or closed sends nothing).
 */
function outcomeUnknown(err: unknown, before: string): boolean {
  const code = codeOf(err) ?? '';
  if (UNKNOWN_OUTCOME_CODES.has(code)) return true;
  return SESSION_ENDED.has(code) && before !== 'lost' && before !== 'closed';
}

/** Writes `group` (tasks in order), splitting and falling back to single queues as needed. */
async function writeGroup(ctx: EngineContext, group: Item[]): Promise<void> {
  let rest = group;
  for (let lostRounds = 0; rest.length > 0; ) {
    if (rest.length === 1) {
      await queueOne(ctx, rest[0]!);
      return;
    }
    let err: unknown;
    const before = ctx.coordinator.state;
    try {
      const res = await ctx.coordinator.multi(rest.flatMap((it) => it.ops));
      rest.forEach((it, index) => {
        it.result = { key: it.key, entry: pathOf(res[2 * index + 1]), previous: null };
      });
      return;
    } catch (caught) {
      err = caught;
    }
    if (outcomeUnknown(err, before)) {
      if (await appliedAfterLoss(ctx, rest, err)) return;
      // Checked: nothing of this group was written.
      if (++lostRounds >= MAX_LOST_ROUNDS) throw aboutTask(err, rest[0]!.index, rest[0]!.index);
      continue;
    }
    const failure = multiFailure(err);
    if (failure === null || failure.index < 0) {
      // Refused as a whole before it was sent (too large for this client): split it. Any
      // other failure of the whole (a session already lost) wrote nothing: say so.
      if (!REFUSED_AS_TOO_LARGE.has(codeOf(err) ?? ''))
        throw aboutTask(err, rest[0]!.index, rest[0]!.index);
      const half = Math.ceil(rest.length / 2);
      await writeGroup(ctx, rest.slice(0, half));
      await writeGroup(ctx, rest.slice(half));
      return;
    }
    // Nothing of the group applied. The tasks before the refused one are fine: write them,
    // then the refused one by the rules of `queue` (a re-queue, or its error), then the rest.
    const at = Math.floor(failure.index / 2);
    await writeGroup(ctx, rest.slice(0, at));
    await queueOne(ctx, rest[at]!);
    rest = rest.slice(at + 1);
  }
}

async function queueOne(ctx: EngineContext, it: Item): Promise<void> {
  const before = ctx.coordinator.state;
  try {
    it.result = await queuePrepared(ctx, it);
  } catch (err) {
    // `queue` looks for a write whose reply was lost once the connection is back; an error
    // of that kind here means it could not look.
    throw aboutTask(err, it.index, it.index, outcomeUnknown(err, before) ? 1 : 0);
  }
}

/**
 * After a group's reply was lost: whether it applied. A multi is all or nothing, so the first
 * task's entry, found by its `qid`, answers for the whole group. When it applied, the others'
 * entries are read off one listing per bucket (a key has one entry at most; one already
 * claimed and gone leaves its path unknown, '').
 */
async function appliedAfterLoss(ctx: EngineContext, group: Item[], err: unknown): Promise<boolean> {
  const first = group[0]!;
  const unsure = (why: unknown) => aboutTask(why, first.index, first.index, group.length);
  if (!(await connectionBack(ctx.coordinator))) throw unsure(err);
  try {
    return await lookForGroup(ctx, group, err);
  } catch (lookErr) {
    // The look did not finish (the session ended, the connection went again): whether the
    // group landed is as unknown as before.
    throw unsure(lookErr);
  }
}

/** Whether the group whose write was lost (`err`) landed (then its results are filled in). */
async function lookForGroup(ctx: EngineContext, group: Item[], err: unknown): Promise<boolean> {
  const first = group[0]!;
  const found = await lostQueueWrite(ctx, first.key, first.qid, err);
  if (found === null) return false;
  const byBucket = new Map<string, Item[]>();
  for (const it of group) {
    const bucket = ctx.layout.bucketPath(AREA.pending, ctx.layout.bucketOf(it.key));
    byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), it]);
  }
  for (const [bucket, items] of byBucket) {
    const names = new Map<string, string>();
    for (const name of await ctx.coordinator.children(bucket)) {
      const entry = parseEntryName(name);
      if (entry) names.set(entry.encodedKey, `${bucket}/${name}`);
    }
    for (const it of items)
      it.result = {
        key: it.key,
        entry: names.get(it.key.join(KEY_SEPARATOR)) ?? '',
        previous: null,
      };
  }
  first.result = { key: first.key, entry: found, previous: null };
  return true;
}
