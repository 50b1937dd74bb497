import { decodeJson } from '../contract/paths.js';
import { KEY_SEPARATOR, type TaskKey, validateKey } from '../tree/keys.js';
import { findEntry } from './admin.js';
import type { EngineContext } from './context.js';
import { parseEntryName } from './layout.js';
import { codeOf } from './support.js';
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
  const dir = ctx.layout.bucketPath('w', bucket);
  const live = await Promise.all(
    names.map((n) =>
      ctx.c.exists(`${dir}/${n}`).then(
        (stat) => (stat?.ephemeralOwner ? n : null),
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
  const { c, layout } = ctx;
  const counts: AreaCounts = { pending: 0, working: 0, completed: 0, failed: 0 };
  await Promise.all(
    range(layout.buckets).map(async (b) => {
      const [p, w, done] = await Promise.all([
        c.children(layout.bucketPath('p', b)),
        c.children(layout.bucketPath('w', b)),
        c.exists(layout.bucketPath('c', b)),
      ]);
      const working = await liveClaims(ctx, b, w);
      for (const name of p) {
        const e = parseEntryName(name);
        if (!e) continue;
        if (working.has(e.encodedKey)) counts.working++;
        else if (e.kind === 'x') counts.failed++;
        else counts.pending++;
      }
      counts.completed += done?.numChildren ?? 0;
    }),
  );
  return counts;
}

/** Per-key state of one bucket, from its pending, working and completed listings. */
async function bucketStates(ctx: EngineContext, b: number): Promise<Map<string, ListedTask>> {
  const { c, layout } = ctx;
  const [p, w, done] = await Promise.all([
    c.children(layout.bucketPath('p', b)),
    c.children(layout.bucketPath('w', b)),
    c.children(layout.bucketPath('c', b)),
  ]);
  const out = new Map<string, ListedTask>();
  const entries = p.flatMap((n) => parseEntryName(n) ?? []);
  entries.sort((x, y) => (x.priority !== y.priority ? y.priority - x.priority : x.seq - y.seq));
  for (const e of entries) {
    out.set(e.encodedKey, {
      key: e.encodedKey.split(KEY_SEPARATOR),
      state: e.kind === 'x' ? 'failed' : 'pending',
      priority: e.priority,
    });
  }
  for (const k of await liveClaims(ctx, b, w)) {
    const t = out.get(k);
    if (t) t.state = 'working';
  }
  for (const k of done) out.set(k, { key: k.split(KEY_SEPARATOR), state: 'completed' });
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
  for (const m of maps) for (const [k, t] of m) states.set(k, t.state);
  const byKey = new Map<string, TreeNode>();
  const top: TreeNode[] = [];
  nodes.sort((a, b) => compareKeys(a.key, b.key));
  for (const n of nodes) {
    const encoded = n.key.join(KEY_SEPARATOR);
    const node: TreeNode = {
      key: n.key,
      name: n.name,
      type: n.type ?? '',
      state: states.get(encoded) ?? null,
      children: [],
    };
    byKey.set(encoded, node);
    const parent = byKey.get(n.key.slice(0, -1).join(KEY_SEPARATOR));
    if (parent && n.key.length > root.length + 1) parent.children.push(node);
    else top.push(node);
  }
  return top;
}

async function getJson<T>(ctx: EngineContext, path: string) {
  try {
    const got = await ctx.c.get(path);
    return { value: decodeJson<T>(got.data, path), stat: got.stat };
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return null;
    throw err;
  }
}

/** One task's full record, or `null` when the world has no such task. */
export async function taskRecord(ctx: EngineContext, key: TaskKey): Promise<TaskRecord | null> {
  validateKey(key, ctx.limits);
  const { layout } = ctx;
  const [tree, found, claimNode, completed, failed] = await Promise.all([
    getJson<{ name: string; type: string; data?: unknown }>(ctx, layout.treePath(key)),
    findEntry(ctx, key),
    getJson<ClaimIdentity>(ctx, layout.recordPath('w', key)),
    getJson<CompletedRecord>(ctx, layout.recordPath('c', key)),
    getJson<FailedRecord>(ctx, layout.recordPath('f', key)),
  ]);
  if (!tree) return null;
  // Only an ephemeral working node is a claim (see liveClaims).
  const working = claimNode?.stat.ephemeralOwner ? claimNode : null;
  const entry = found ? await getJson<EntryData>(ctx, found.path) : null;
  const rec: TaskRecord = {
    key,
    name: tree.value?.name ?? key[key.length - 1]!,
    type: tree.value?.type ?? '',
    state: null,
    attempts: 0,
  };
  if (tree.value?.data !== undefined && tree.value.data !== null) rec.data = tree.value.data;
  if (found && entry) {
    const e = entry.value;
    rec.state = found.entry.kind === 'x' ? 'failed' : working ? 'working' : 'pending';
    rec.priority = found.entry.priority;
    rec.attempts = e.attempts;
    rec.maxAttempts = e.maxAttempts;
    rec.queuedAt = e.queuedAt;
    if (e.hints) rec.hints = e.hints;
    if (e.notBefore !== undefined) rec.notBefore = e.notBefore;
    if (e.lastError) rec.lastError = e.lastError;
    if (working) {
      rec.worker = working.value;
      rec.startedAt = working.value.at;
    }
  }
  if (completed) {
    const c = completed.value;
    rec.state = 'completed';
    rec.attempts = c.attempts;
    rec.queuedAt = c.queuedAt;
    rec.startedAt = c.startedAt;
    rec.completedAt = c.completedAt;
    if (c.result !== undefined) rec.result = c.result;
    rec.worker = { worker: c.worker, session: '', at: c.startedAt };
  }
  if (failed) {
    const f = failed.value;
    rec.state = 'failed';
    rec.attempts = f.attempts;
    rec.error = f.error;
    rec.failedAt = f.failedAt;
  }
  return rec;
}
