import type { Coordinator } from '../contract/coordinator.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import { AREA, type RecordArea } from '../engine/layout.js';
import { cancelTask } from '../engine/task-ops.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { Indexed } from './dir-index.js';
import { removeCompleted } from './remove.js';

/** Options of a manual clean. */
export interface CleanOptions {
  /** Only records at least this old (ms, by their creation time); all when omitted. */
  olderThanMs?: number;
  /** Count what would go, remove nothing. */
  dryRun?: boolean;
  /** Told how far the removal got: `done` of `total` matching records. */
  onProgress?: (done: number, total: number) => void;
  /** Told how far the scan got: `done` of `total` buckets listed and stat'ed. */
  onScan?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/** What a clean found and did. */
export interface CleanReport {
  /** Records that matched (old enough). */
  matched: number;
  /** Records removed (0 on a dry run). */
  removed: number;
  /** Tree nodes removed with them. */
  treeNodes: number;
  /** Matched records left in place: they changed meanwhile (re-queued, retried, cancelled). */
  skipped: number;
}

const STAT_PAGE = 500;

/** Every record of an area with its creation stamp, read bucket by bucket in pages. */
export async function recordsOf(
  coordinator: Coordinator,
  dirs: readonly string[],
  signal?: AbortSignal,
  onScan?: (done: number, total: number) => void,
): Promise<Indexed[]> {
  const out: Indexed[] = [];
  for (const [index, dir] of dirs.entries()) {
    onScan?.(index, dirs.length);
    if (signal?.aborted) break;
    let names: string[];
    try {
      names = await coordinator.children(dir);
    } catch (err) {
      if (codeOf(err) === 'NO_NODE') continue;
      throw err;
    }
    for (let i = 0; i < names.length; i += STAT_PAGE) {
      const page = names.slice(i, i + STAT_PAGE);
      const stats = await Promise.all(
        page.map((n) => coordinator.exists(`${dir}/${n}`).catch(() => null)),
      );
      page.forEach((name, at) => {
        const st = stats[at];
        if (st) out.push({ dir, name, seenAt: st.ctime, zxid: st.czxid });
      });
    }
  }
  onScan?.(dirs.length, dirs.length);
  return out;
}

function areaDirs(ctx: EngineContext, area: RecordArea): string[] {
  return Array.from({ length: ctx.layout.buckets }, (_, b) => ctx.layout.bucketPath(area, b));
}

/**
 * The records of `area` a clean acts on, and its report before it removes any (progress at 0
 * of them told).
 */
async function matchingIn(
  ctx: EngineContext,
  area: RecordArea,
  options: CleanOptions,
): Promise<{ victims: Indexed[]; report: CleanReport }> {
  const found = await recordsOf(
    ctx.coordinator,
    areaDirs(ctx, area),
    options.signal,
    options.onScan,
  );
  const victims = matching(found, ctx.clock.now(), options.olderThanMs);
  const report: CleanReport = { matched: victims.length, removed: 0, treeNodes: 0, skipped: 0 };
  options.onProgress?.(0, victims.length);
  return { victims, report };
}

function matching(records: Indexed[], now: number, olderThanMs: number | undefined): Indexed[] {
  if (olderThanMs === undefined) return records;
  const cutoff = now - olderThanMs;
  return records.filter((r) => r.seenAt <= cutoff).sort((a, b) => a.seenAt - b.seenAt);
}

/**
 * Removes completed records (and the tree nodes of completed leaves) older than
 * `olderThanMs`, with the reaper's guards: a task queued again meanwhile keeps its record.
 */
export async function cleanCompleted(
  ctx: EngineContext,
  options: CleanOptions = {},
): Promise<CleanReport> {
  const { victims, report } = await matchingIn(ctx, AREA.completed, options);
  if (options.dryRun || victims.length === 0) return report;
  const done = await removeCompleted(
    ctx,
    victims,
    () => {},
    (n) => options.onProgress?.(n, victims.length),
  );
  return { ...report, removed: done.records, treeNodes: done.treeNodes, skipped: done.skipped };
}

/**
 * Removes failed tasks whose failed record is older than `olderThanMs`, as `cancel` does
 * (entry, record, and the tree node when it has no children). Their descendants, which the
 * failed task kept blocked, become runnable.
 */
export async function cleanFailed(
  ctx: EngineContext,
  options: CleanOptions = {},
): Promise<CleanReport> {
  const { victims, report } = await matchingIn(ctx, AREA.failed, options);
  if (options.dryRun) return report;
  let done = 0;
  const PARALLEL = 32;
  for (let i = 0; i < victims.length && !options.signal?.aborted; i += PARALLEL) {
    await Promise.all(
      victims.slice(i, i + PARALLEL).map(async (victim) => {
        const key = victim.name.split(KEY_SEPARATOR);
        try {
          // Still failed by the record seen? A retry deleted it (and a new failure is younger).
          const st = await ctx.coordinator.exists(`${victim.dir}/${victim.name}`);
          if (!st || st.czxid !== victim.zxid) {
            report.skipped++;
            return;
          }
          await cancelTask(ctx, key, false);
          report.removed++;
        } catch (err) {
          // Gone meanwhile, or a parent: cancel refuses a task with children alone (its
          // pending children would run on under a node without state), so it is left.
          const code = codeOf(err);
          if (code !== 'NO_SUCH_TASK' && code !== 'TASK_STATE') throw err;
          report.skipped++;
        }
      }),
    );
    done = Math.min(victims.length, i + PARALLEL);
    options.onProgress?.(done, victims.length);
  }
  return report;
}
