import type { Stat } from '../contract/coordinator.js';
import { KEY_SEPARATOR, type TaskKey, validateKey } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { type CorruptNode, type NodeShape, readNode, shapes } from './corrupt.js';
import { codeOf, readTaskError } from './errors.js';
import { AREA, ENTRY_KIND, parseEntryName } from './layout.js';
import { findEntry } from './task-ops.js';
import type {
  AreaCounts,
  ClaimIdentity,
  CompletedRecord,
  EntryData,
  FailedRecord,
  ListedTask,
  TaskRecord,
  TaskStateName,
  TreeNode,
} from './types.js';
import { compareKeys, walkTree } from './walk.js';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * The live claims among a working bucket's children: a claim's node is ephemeral, so a
 * persistent one (by hand, or recreated by an import) is no claim and its task is not
 * working. One stat per working node, and working nodes are few (one per running task).
 */
async function liveClaims(
  ctx: EngineContext,
  bucket: number,
  names: string[],
): Promise<Set<string>> {
  const dir = ctx.layout.bucketPath(AREA.working, bucket);
  const live = await Promise.all(
    names.map((name) =>
      ctx.coordinator.exists(`${dir}/${name}`).then(
        (stat) => (stat?.ephemeralOwner ? name : null),
        (err) => (codeOf(err) === 'NO_NODE' ? null : Promise.reject(err)),
      ),
    ),
  );
  return new Set(live.filter((n): n is string => n !== null));
}

/**
 * Counts per area, counting what `list()` shows: per bucket one pending listing, one working
 * listing and one stat of the completed bucket (its numChildren). Only names that parse as
 * entries count, so a foreign node in a pending bucket is ignored here as in `list()`; an
 * entry with a working node is working, an `x` entry failed, any other entry pending.
 */
export async function countAreas(ctx: EngineContext): Promise<AreaCounts> {
  const { coordinator, layout } = ctx;
  const counts: AreaCounts = { pending: 0, working: 0, completed: 0, failed: 0 };
  await Promise.all(
    range(layout.buckets).map(async (bucketNo) => {
      const [pendingNames, workingNames, done] = await Promise.all([
        coordinator.children(layout.bucketPath(AREA.pending, bucketNo)),
        coordinator.children(layout.bucketPath(AREA.working, bucketNo)),
        coordinator.exists(layout.bucketPath(AREA.completed, bucketNo)),
      ]);
      const working = await liveClaims(ctx, bucketNo, workingNames);
      for (const name of pendingNames) {
        const entry = parseEntryName(name);
        if (!entry) continue;
        if (working.has(entry.encodedKey)) counts.working++;
        else if (entry.kind === ENTRY_KIND.dead) counts.failed++;
        else counts.pending++;
      }
      counts.completed += done?.numChildren ?? 0;
    }),
  );
  return counts;
}

/** Per-key state of one bucket, from its pending, working and completed listings. */
async function bucketStates(
  ctx: EngineContext,
  bucketNo: number,
): Promise<Map<string, ListedTask>> {
  const { coordinator, layout } = ctx;
  const [pendingNames, workingNames, done] = await Promise.all([
    coordinator.children(layout.bucketPath(AREA.pending, bucketNo)),
    coordinator.children(layout.bucketPath(AREA.working, bucketNo)),
    coordinator.children(layout.bucketPath(AREA.completed, bucketNo)),
  ]);
  const out = new Map<string, ListedTask>();
  const entries = pendingNames.flatMap((n) => parseEntryName(n) ?? []);
  entries.sort((x, y) => (x.priority !== y.priority ? y.priority - x.priority : x.seq - y.seq));
  for (const entry of entries) {
    out.set(entry.encodedKey, {
      key: entry.encodedKey.split(KEY_SEPARATOR),
      state: entry.kind === ENTRY_KIND.dead ? 'failed' : 'pending',
      priority: entry.priority,
    });
  }
  for (const key of await liveClaims(ctx, bucketNo, workingNames)) {
    const listed = out.get(key);
    if (listed) listed.state = 'working';
  }
  for (const key of done) out.set(key, { key: key.split(KEY_SEPARATOR), state: 'completed' });
  return out;
}

/** Tasks in one state (every state when omitted), in claim order per bucket. */
export async function listTasks(ctx: EngineContext, state?: TaskStateName): Promise<ListedTask[]> {
  const maps = await Promise.all(range(ctx.layout.buckets).map((b) => bucketStates(ctx, b)));
  return maps.flatMap((m) => [...m.values()].filter((t) => !state || t.state === state));
}

/** The tree below `root` (the whole world by default), each node with its state. */
export async function taskTree(ctx: EngineContext, root: TaskKey = []): Promise<TreeNode[]> {
  if (root.length > 0) validateKey(root, ctx.limits);
  const buckets = root.length > 0 ? [ctx.layout.bucketOf(root)] : range(ctx.layout.buckets);
  const [nodes, maps] = await Promise.all([
    walkTree(ctx, root, () => true),
    Promise.all(buckets.map((b) => bucketStates(ctx, b))),
  ]);
  const states = new Map<string, TaskStateName>();
  for (const bucketMap of maps)
    for (const [key, listed] of bucketMap) states.set(key, listed.state);
  const byKey = new Map<string, TreeNode>();
  const top: TreeNode[] = [];
  nodes.sort((a, b) => compareKeys(a.key, b.key));
  for (const walked of nodes) {
    const encoded = walked.key.join(KEY_SEPARATOR);
    const node: TreeNode = {
      key: walked.key,
      name: walked.name,
      type: walked.type ?? '',
      state: states.get(encoded) ?? null,
      children: [],
    };
    if (walked.corrupt !== undefined) node.corrupt = walked.corrupt;
    byKey.set(encoded, node);
    const parent = byKey.get(walked.key.slice(0, -1).join(KEY_SEPARATOR));
    if (parent && walked.key.length > root.length + 1) parent.children.push(node);
    else top.push(node);
  }
  return top;
}

/**
 * A node's data: `null` when the node does not exist, `{ value: undefined }` when it exists
 * but is corrupt (reported to `bad` and the context's sink).
 */
async function getNode<T>(
  ctx: EngineContext,
  path: string,
  shape: NodeShape,
  bad: CorruptNode[],
): Promise<{ value: T | undefined; stat: Stat } | null> {
  try {
    const got = await ctx.coordinator.get(path);
    const value = readNode<T>(got.data, path, shape, (corrupt) => {
      bad.push(corrupt);
      ctx.onCorrupt(corrupt);
    });
    return { value, stat: got.stat };
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return null;
    throw err;
  }
}

/**
 * One task's full record, or `null` when the world has no such task. A node of the task
 * that cannot be read leaves its fields out and is listed in `corrupt`; the state still
 * follows from which nodes exist.
 */
export async function taskRecord(ctx: EngineContext, key: TaskKey): Promise<TaskRecord | null> {
  validateKey(key, ctx.limits);
  const { layout } = ctx;
  const bad: CorruptNode[] = [];
  const [tree, found, claimNode, completed, failed] = await Promise.all([
    getNode<{ name?: string; type?: string; data?: unknown } | null>(
      ctx,
      layout.treePath(key),
      shapes.tree,
      bad,
    ),
    findEntry(ctx, key),
    getNode<ClaimIdentity>(ctx, layout.recordPath(AREA.working, key), shapes.claim, bad),
    getNode<CompletedRecord>(ctx, layout.recordPath(AREA.completed, key), shapes.record, bad),
    getNode<FailedRecord>(ctx, layout.recordPath(AREA.failed, key), shapes.record, bad),
  ]);
  if (!tree) return null;
  // Only an ephemeral working node is a claim (see liveClaims).
  const working = claimNode?.stat.ephemeralOwner ? claimNode : null;
  const entry = found ? await getNode<EntryData>(ctx, found.path, shapes.entry, bad) : null;
  const treeData = tree.value;
  const rec: TaskRecord = {
    key,
    name: typeof treeData?.name === 'string' ? treeData.name : key[key.length - 1]!,
    type: typeof treeData?.type === 'string' ? treeData.type : '',
    state: null,
    attempts: 0,
  };
  if (treeData?.data !== undefined && treeData.data !== null) rec.data = treeData.data;
  if (found && entry) {
    rec.state = found.entry.kind === ENTRY_KIND.dead ? 'failed' : working ? 'working' : 'pending';
    rec.priority = found.entry.priority;
    const entryData = entry.value;
    if (entryData) {
      rec.attempts = entryData.attempts;
      rec.maxAttempts = entryData.maxAttempts;
      rec.queuedAt = entryData.queuedAt;
      if (entryData.hints) rec.hints = entryData.hints;
      if (entryData.notBefore !== undefined) rec.notBefore = entryData.notBefore;
      const lastError = readTaskError(entryData.lastError);
      if (lastError) rec.lastError = lastError;
    }
    if (working?.value) {
      rec.worker = working.value;
      rec.startedAt = working.value.at;
    }
  }
  if (completed) {
    rec.state = 'completed';
    const completedRecord = completed.value;
    if (completedRecord) {
      rec.attempts = completedRecord.attempts;
      rec.queuedAt = completedRecord.queuedAt;
      rec.startedAt = completedRecord.startedAt;
      rec.completedAt = completedRecord.completedAt;
      if (completedRecord.result !== undefined) rec.result = completedRecord.result;
      rec.worker = { worker: completedRecord.worker, session: '', at: completedRecord.startedAt };
    }
  }
  if (failed) {
    rec.state = 'failed';
    const failedRecord = failed.value;
    if (failedRecord) {
      rec.attempts = failedRecord.attempts;
      const error = readTaskError(failedRecord.error);
      if (error) rec.error = error;
      rec.failedAt = failedRecord.failedAt;
    }
  }
  if (bad.length > 0) rec.corrupt = bad;
  return rec;
}
