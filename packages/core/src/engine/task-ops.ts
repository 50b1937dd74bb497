import type { Op } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { KEY_SEPARATOR, type TaskKey, validateKey } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { codeOf, taskStateError } from './errors.js';
import { AREA, ENTRY_KIND, type EntryName, entryPrefix, parseEntryName } from './layout.js';
import { progressPath } from './progress.js';
import type { EntryData } from './types.js';
import { walkTree } from './walk.js';

/** The pending entry of `key` in its bucket, or `null`. */
export async function findEntry(
  ctx: EngineContext,
  key: TaskKey,
): Promise<{ entry: EntryName; path: string } | null> {
  const bucket = ctx.layout.bucketPath(AREA.pending, ctx.layout.bucketOf(key));
  const encodedKey = key.join(KEY_SEPARATOR);
  for (const name of await ctx.coordinator.children(bucket)) {
    const entry = parseEntryName(name);
    if (entry && entry.encodedKey === encodedKey) return { entry, path: `${bucket}/${name}` };
  }
  return null;
}

const RACE_CODES = new Set(['BAD_VERSION', 'NO_NODE', 'NODE_EXISTS', 'NOT_EMPTY']);

/** Repeats `attempt` while it loses races (it returns `undefined` to ask for another round). */
async function untilSettled<T>(op: string, key: TaskKey, attempt: () => Promise<T | undefined>) {
  for (let round = 0; round < 8; round++) {
    try {
      const out = await attempt();
      if (out !== undefined) return out;
    } catch (err) {
      if (!RACE_CODES.has(codeOf(err) ?? '')) throw err;
    }
  }
  throw new ZoottError('TASK_STATE', `task ${key.join(KEY_SEPARATOR)}: too much contention`, {
    op,
  });
}

/**
 * Operator retry of a dead-lettered task: ONE multi turning its `x` entry back into an `r`
 * entry with the attempt count reset, and deleting the failed record and the failed run's
 * progress node. That node says a later attempt than the next run's (the count starts again),
 * and a progress writer yields to a later attempt: left, it would silence the next run.
 */
export async function retryTask(ctx: EngineContext, key: TaskKey): Promise<void> {
  validateKey(key, ctx.limits);
  await untilSettled('retry', key, async () => {
    const found = await findEntry(ctx, key);
    if (found?.entry.kind !== ENTRY_KIND.dead)
      throw taskStateError(key, 'is not failed, so there is nothing to retry', 'retry');
    const got = await ctx.coordinator.get(found.path);
    const {
      lastError: _e,
      notBefore: _n,
      claim: _c,
      ...rest
    } = decodeJson<EntryData>(got.data, found.path);
    const fresh: EntryData = { ...rest, attempts: 0 };
    const bucket = ctx.layout.bucketPath(AREA.pending, ctx.layout.bucketOf(key));
    const progress = progressPath(ctx.layout, key);
    const reported = await ctx.coordinator.exists(progress);
    // The new entry first: a tree watch reports the ops one by one, and the task must read as
    // failed until it reads as retried (never as gone in between; see task-transitions.ts).
    const ops: Op[] = [
      {
        op: 'create',
        path: `${bucket}/${entryPrefix(ENTRY_KIND.retry, found.entry.priority, found.entry.encodedKey)}`,
        data: encodeJson(fresh),
        sequential: true,
      },
      { op: 'delete', path: found.path, version: got.stat.version },
      { op: 'delete', path: ctx.layout.recordPath(AREA.failed, key) },
    ];
    if (reported) ops.push({ op: 'delete', path: progress, version: reported.version });
    await ctx.coordinator.multi(ops);
    return true;
  });
}

/**
 * Cancels a task: its entry, claim, completed and failed records and its tree node go (a
 * worker running it sees its claim vanish and aborts the handler). A task with children is
 * refused (TASK_STATE) unless `subtree`: then every descendant goes first (deepest first,
 * one multi per task). Returns the keys removed.
 */
export async function cancelTask(
  ctx: EngineContext,
  key: TaskKey,
  subtree: boolean,
): Promise<TaskKey[]> {
  validateKey(key, ctx.limits);
  const treePath = ctx.layout.treePath(key);
  const node = await ctx.coordinator.exists(treePath);
  if (!node)
    throw new ZoottError('NO_SUCH_TASK', `task ${key.join(KEY_SEPARATOR)} does not exist`, {
      op: 'cancel',
      path: treePath,
    });
  // Cancelling only the parent would leave a node without state above children that run
  // on: the caller says whether the children go too.
  if (!subtree && node.numChildren > 0)
    throw taskStateError(
      key,
      `has ${node.numChildren} child task${node.numChildren === 1 ? '' : 's'}; cancel it with its subtree to remove them too`,
      'cancel',
    );
  const keys: TaskKey[] = [];
  if (subtree) {
    const below = await walkTree(ctx, key, () => false);
    below.sort((a, b) => b.key.length - a.key.length);
    // Tasks of one depth are independent: cancel them together, deepest level first.
    let index = 0;
    while (index < below.length) {
      const depth = below[index]!.key.length;
      const level: TaskKey[] = [];
      while (index < below.length && below[index]!.key.length === depth)
        level.push(below[index++]!.key);
      await Promise.all(level.map((k) => cancelOne(ctx, k, true)));
      keys.push(...level);
    }
  }
  await cancelOne(ctx, key, subtree);
  keys.push(key);
  return keys;
}

async function cancelOne(ctx: EngineContext, key: TaskKey, removeNode: boolean): Promise<void> {
  const { coordinator, layout } = ctx;
  const treePath = layout.treePath(key);
  await untilSettled('cancel', key, async () => {
    const [found, node, working, completed, failed, progress] = await Promise.all([
      findEntry(ctx, key),
      coordinator.exists(treePath),
      coordinator.exists(layout.recordPath(AREA.working, key)),
      coordinator.exists(layout.recordPath(AREA.completed, key)),
      coordinator.exists(layout.recordPath(AREA.failed, key)),
      coordinator.exists(progressPath(layout, key)),
    ]);
    const ops: Op[] = [];
    if (found) ops.push({ op: 'delete', path: found.path });
    if (working) ops.push({ op: 'delete', path: layout.recordPath(AREA.working, key) });
    if (completed) ops.push({ op: 'delete', path: layout.recordPath(AREA.completed, key) });
    if (failed) ops.push({ op: 'delete', path: layout.recordPath(AREA.failed, key) });
    if (progress) ops.push({ op: 'delete', path: progressPath(layout, key) });
    if (node && (removeNode || node.numChildren === 0))
      ops.push({ op: 'delete', path: treePath, version: -1 });
    if (ops.length > 0) await coordinator.multi(ops);
    return true;
  });
}
