import type { Coordinator } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { KEY_SEPARATOR, type TaskKey, validateKey } from '../tree/keys.js';
import type { AnyTasks, TaskResult, TaskType } from '../tree/task-map.js';
import type { EngineContext } from './context.js';
import { shapes as nodeShapes, readNode } from './corrupt.js';
import { codeOf, readTaskError, UNCODED_ERROR } from './errors.js';
import { isConnectionTrouble } from './event-tree-feed.js';
import { AREA, ENTRY_KIND } from './layout.js';
import { findEntry } from './task-ops.js';
import type { CompletedRecord, EntryData, FailedRecord, TaskError } from './types.js';

/**
 * How a task ended, from `engine.waitFor`: `completed` with its result (typed by the task
 * map through `type`), `failed` for good (dead-lettered) with its error, or `cancelled`:
 * the task left the world without a completed or failed record (cancelled, or removed
 * before its end was seen).
 */
export type TaskEnd<M = AnyTasks, K extends TaskType<M> = TaskType<M>> =
  | {
      [T in K]: {
        state: 'completed';
        key: TaskKey;
        type: T;
        result: TaskResult<M, T>;
        attempts: number;
        completedAt: number;
      };
    }[K]
  | {
      [T in K]: {
        state: 'failed';
        key: TaskKey;
        type: T;
        error: TaskError;
        attempts: number;
        failedAt?: number;
      };
    }[K]
  | { state: 'cancelled'; key: TaskKey };

/** Where a waited task stands meanwhile, for {@link WaitForOptions.onState}. */
export interface WaitingState {
  state: 'pending' | 'working';
  /** The attempt running (working) or to run next (pending), 1 for the first. */
  attempt: number;
}

/** Options of `engine.waitFor`. */
export interface WaitForOptions {
  /** Gives up after this long: the promise rejects with WAIT_TIMEOUT. */
  timeoutMs?: number;
  /** Gives up when aborted: the promise rejects with ABORTED. */
  signal?: AbortSignal;
  /** Told whenever the task is seen waiting or running on its way to its end. */
  onState?: (state: WaitingState) => void;
}

/** One look at the task: its end, or where it stands (with the one watch that says more). */
type Look = { end: TaskEnd } | { waiting: WaitingState } | { again: true };

/**
 * Waits for the task `key` to end. One watch at a time, on the task's pending entry: every
 * transition of the task changes or deletes it (a claim sets it; a completion, a retry, a dead
 * letter and a cancel delete it), so the wait reads again only when the task moved. A
 * connection that drops and comes back in the same session keeps the watch; after a new
 * session (renewing a lost one is the coordinator owner's job, as for `events()`) the task is
 * read again. Rejects with NO_SUCH_TASK when the world has no such task when the wait
 * begins, WAIT_TIMEOUT, ABORTED, or CLOSED when the coordinator closes.
 */
export async function waitForTask(
  ctx: EngineContext,
  key: TaskKey,
  options: WaitForOptions = {},
): Promise<TaskEnd> {
  validateKey(key, ctx.limits);
  const coordinator = ctx.coordinator;
  const stop = stopper(key, options);
  let wake: () => void = () => {};
  const offSession = coordinator.onSession((event) => {
    // A new connection or session: the watch may be gone with the old one; look again.
    if (event.type === 'connected' || event.type === 'reconnected' || event.type === 'closed')
      wake();
  });
  try {
    for (let first = true; ; first = false) {
      stop.check();
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      let look: Look;
      try {
        look = await lookAt(ctx, key, first, () => wake());
      } catch (err) {
        if (!isConnectionTrouble(err) || coordinator.state === 'closed') throw err;
        await Promise.race([untilConnected(coordinator), stop.stopped]);
        continue;
      }
      if ('end' in look) return look.end;
      if ('waiting' in look) options.onState?.(look.waiting);
      else continue;
      if (coordinator.state === 'closed')
        throw new ZoottError('CLOSED', undefined, { op: 'waitFor' });
      await Promise.race([woken, stop.stopped]);
    }
  } finally {
    offSession();
    stop.dispose();
  }
}

/** The timeout and the caller's signal, as a promise that rejects and a check. */
function stopper(key: TaskKey, options: WaitForOptions) {
  const what = `task ${key.join(KEY_SEPARATOR)}`;
  let reason: ZoottError | null = null;
  let reject: (err: unknown) => void = () => {};
  const stopped = new Promise<never>((_, rejectStopped) => {
    reject = rejectStopped;
  });
  stopped.catch(() => {});
  const end = (err: ZoottError) => {
    reason ??= err;
    reject(reason);
  };
  const onAbort = () => end(new ZoottError('ABORTED', `stopped waiting for ${what}`));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(
          () =>
            end(
              new ZoottError('WAIT_TIMEOUT', `${what} did not end within ${options.timeoutMs} ms`, {
                op: 'waitFor',
              }),
            ),
          Math.max(0, Math.min(options.timeoutMs, 2 ** 31 - 1)),
        );
  return {
    stopped,
    check: () => {
      if (reason) throw reason;
    },
    dispose: () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** Resolves once requests flow again (state `connected`), rejects once the coordinator closes. */
function untilConnected(coordinator: Coordinator): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (coordinator.state === 'connected') {
        off();
        resolve();
      } else if (coordinator.state === 'closed') {
        off();
        reject(new ZoottError('CLOSED', undefined, { op: 'waitFor' }));
      }
    };
    const off = coordinator.onSession(check);
    check();
  });
}

/** A node's data, `null` when it does not exist. */
async function getOrNull(ctx: EngineContext, path: string): Promise<Uint8Array | null> {
  try {
    return (await ctx.coordinator.get(path)).data;
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return null;
    throw err;
  }
}

/**
 * One look at the task. Its pending entry and its completed record are read together (in that
 * order, so a completion between the two shows as completed). Waiting, the entry is read once
 * more with the watch `onChange`.
 */
async function lookAt(
  ctx: EngineContext,
  key: TaskKey,
  first: boolean,
  onChange: () => void,
): Promise<Look> {
  const { layout, onCorrupt } = ctx;
  const [found, done] = await Promise.all([
    findEntry(ctx, key),
    getOrNull(ctx, layout.recordPath(AREA.completed, key)),
  ]);
  if (done) {
    const path = layout.recordPath(AREA.completed, key);
    const rec = readNode<CompletedRecord>(done, path, nodeShapes.record, onCorrupt);
    return {
      end: {
        state: 'completed',
        key,
        type: rec?.type ?? '',
        result: rec?.result,
        attempts: rec?.attempts ?? 0,
        completedAt: rec?.completedAt ?? 0,
      },
    };
  }
  if (found?.entry.kind === ENTRY_KIND.dead) return { end: await failedEnd(ctx, key, found.path) };
  if (found) {
    let entry: EntryData | undefined;
    try {
      const got = await ctx.coordinator.get(found.path, { watch: onChange });
      entry = readNode<EntryData>(got.data, found.path, nodeShapes.entry, onCorrupt);
    } catch (err) {
      // Moved on between the listing and the read: look again.
      if (codeOf(err) === 'NO_NODE') return { again: true };
      throw err;
    }
    const attempts = entry?.attempts ?? 0;
    return {
      waiting: entry?.claim
        ? { state: 'working', attempt: attempts }
        : { state: 'pending', attempt: attempts + 1 },
    };
  }
  // No entry and no record: cancelled (a tree node without state is one cancelled while it
  // had children), or never there.
  if (first && !(await ctx.coordinator.exists(layout.treePath(key))))
    throw new ZoottError('NO_SUCH_TASK', `task ${key.join(KEY_SEPARATOR)} does not exist`, {
      op: 'waitFor',
      path: layout.treePath(key),
    });
  return { end: { state: 'cancelled', key } };
}

/** The end of a dead-lettered task: its failed record, or its dead entry's last error. */
async function failedEnd(ctx: EngineContext, key: TaskKey, entryPath: string): Promise<TaskEnd> {
  const path = ctx.layout.recordPath(AREA.failed, key);
  const [record, entry] = await Promise.all([getOrNull(ctx, path), getOrNull(ctx, entryPath)]);
  const rec = record
    ? readNode<FailedRecord>(record, path, nodeShapes.record, ctx.onCorrupt)
    : undefined;
  const dead = entry
    ? readNode<EntryData>(entry, entryPath, nodeShapes.entry, ctx.onCorrupt)
    : undefined;
  const error = readTaskError(rec?.error ?? dead?.lastError) ?? {
    code: UNCODED_ERROR,
    message: 'the failed record holds no error',
  };
  const end: TaskEnd = {
    state: 'failed',
    key,
    type: rec?.type ?? dead?.type ?? '',
    error,
    attempts: rec?.attempts ?? dead?.attempts ?? 0,
  };
  if (rec?.failedAt !== undefined) end.failedAt = rec.failedAt;
  return end;
}
