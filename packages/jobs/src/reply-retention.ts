import {
  type Coordinator,
  isZoottError,
  type RetentionSettings,
  type RetentionTask,
} from '@zoott/core';
import { DirIndex, decodeJson, type Indexed, recordsOf } from '@zoott/core/internal';
import { replyRoot } from './constants.js';

/** Result nodes deleted per multi. */
const BATCH = 100;

/**
 * The reply directories `world` made (their data says `{"world": ...}`), found by listing
 * the world's reply area, `/zoott_~replies/<world>/<exchange>/*`. Each directory's owner is
 * read once and remembered in `owners`. Directories that name no world (the AMQP bridge's
 * outbox and its claims, whose results wait to be published) are left alone.
 */
async function ownedDirs(
  coordinator: Coordinator,
  world: string,
  owners: Map<string, string | null>,
  watch?: () => void,
): Promise<string[]> {
  const list = async (path: string) => {
    try {
      return await coordinator.children(path, watch ? { watch } : undefined);
    } catch (err) {
      if (isZoottError(err, 'NO_NODE')) return [];
      throw err;
    }
  };
  const out: string[] = [];
  const root = replyRoot(world);
  for (const exchange of await list(root)) {
    const at = `${root}/${exchange}`;
    for (const key of await list(at)) {
      const dir = `${at}/${key}`;
      if (!owners.has(dir)) {
        let owner: string | null = null;
        try {
          const got = await coordinator.get(dir);
          const data = decodeJson<unknown>(got.data, dir) as { world?: unknown } | null;
          if (data && typeof data.world === 'string') owner = data.world;
        } catch {
          // Gone, empty or not JSON: no owner, left alone.
        }
        owners.set(dir, owner);
      }
      if (owners.get(dir) === world) out.push(dir);
    }
  }
  return out;
}

/** Deletes result nodes in multis; a multi that fails (one was consumed meanwhile) goes node by node. */
async function deleteResults(
  coordinator: Coordinator,
  victims: readonly Indexed[],
): Promise<number> {
  let removed = 0;
  for (let i = 0; i < victims.length; i += BATCH) {
    const batch = victims.slice(i, i + BATCH);
    try {
      await coordinator.multi(
        batch.map((v) => ({ op: 'delete' as const, path: `${v.dir}/${v.name}` })),
      );
      removed += batch.length;
      continue;
    } catch (err) {
      if (!isZoottError(err)) throw err;
    }
    for (const victim of batch) {
      try {
        await coordinator.delete(`${victim.dir}/${victim.name}`);
        removed++;
      } catch (err) {
        if (!isZoottError(err, 'NO_NODE')) throw err;
      }
    }
  }
  return removed;
}

/**
 * The reaper's work on reply results: results nobody consumed go once older than the
 * world's `results.maxAgeMs`, and the oldest beyond `results.maxCount`, counted over every
 * reply directory the world made. Listings are re-read only when their watch fired.
 */
export class ReplyResultsRetention implements RetentionTask {
  readonly name = 'results';
  private readonly index: DirIndex;
  private readonly owners = new Map<string, string | null>();
  private dirsDirty = true;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly world: string,
    now: () => number,
  ) {
    this.index = new DirIndex(coordinator, now);
  }

  async pass(settings: RetentionSettings, now: number, budget: number): Promise<number> {
    if (this.dirsDirty) {
      this.dirsDirty = false;
      this.index.setDirs(
        await ownedDirs(this.coordinator, this.world, this.owners, () => {
          this.dirsDirty = true;
        }),
      );
    }
    await this.index.refresh();
    const victims = this.index.victims(now, settings.results, budget);
    const removed = await deleteResults(this.coordinator, victims);
    for (const victim of victims) this.index.forget(victim);
    return removed;
  }

  reset(): void {
    this.index.reset();
    this.owners.clear();
    this.dirsDirty = true;
  }
}

/** Options of {@link cleanResults}. */
export interface CleanResultsOptions {
  /** Only results at least this old (by their creation time); all when omitted. */
  olderThanMs?: number;
  dryRun?: boolean;
  onProgress?: (done: number, total: number) => void;
  /** Told how far the scan got: `done` of `total` reply directories read. */
  onScan?: (done: number, total: number) => void;
  /** Now, in ms (default `Date.now()`). */
  now?: number;
}

/**
 * Removes the unconsumed reply results in the reply directories `world` made, older than
 * `olderThanMs`: `zoott clean <world> --results`.
 */
export async function cleanResults(
  coordinator: Coordinator,
  world: string,
  options: CleanResultsOptions = {},
): Promise<{ matched: number; removed: number }> {
  const dirs = await ownedDirs(coordinator, world, new Map());
  const found = await recordsOf(coordinator, dirs, undefined, options.onScan);
  const cutoff = (options.now ?? Date.now()) - (options.olderThanMs ?? 0);
  const victims = found
    .filter((r) => options.olderThanMs === undefined || r.seenAt <= cutoff)
    .sort((a, b) => a.zxid - b.zxid);
  options.onProgress?.(0, victims.length);
  if (options.dryRun) return { matched: victims.length, removed: 0 };
  let removed = 0;
  for (let i = 0; i < victims.length; i += BATCH * 10) {
    removed += await deleteResults(coordinator, victims.slice(i, i + BATCH * 10));
    options.onProgress?.(Math.min(victims.length, i + BATCH * 10), victims.length);
  }
  return { matched: victims.length, removed };
}
