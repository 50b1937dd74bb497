import {
  type AreaCounts,
  type ClaimIdentity,
  type Coordinator,
  createEngine,
  type Engine,
  type EngineLogger,
  isZoottError,
  type TaskKey,
  type TaskRecord,
  type TreeNode,
} from '@zoott/core';
import { listWorlds } from '@zoott/core/admin';
import {
  bucketNumbers,
  decodeJson,
  type FailedRecord,
  KEY_SEPARATOR,
  listBucket,
  readTaskError,
  UNCODED_ERROR,
  validateWorldName,
  type WorkerInfo,
  type WorldLayout,
  waitingEntries,
} from '@zoott/core/internal';

/** Oldest task waiting in the pending area (working and failed tasks excluded). */
export interface OldestPending {
  key: TaskKey;
  /** When its entry was created (server clock, ms since the epoch). */
  since: number;
}

/** One dead-lettered task, from its failed record. */
export interface FailedTask extends FailedRecord {
  key: TaskKey;
}

/** A page of failed tasks and how many there are in all. */
export interface FailedList {
  tasks: FailedTask[];
  /** Failed tasks in all; `tasks` holds at most `limit` of them. */
  total: number;
}

/** One live worker of the registry. */
export interface WorkerView extends Partial<WorkerInfo> {
  /** Registry node name (`worker-_p1a2b3c4d5e6f_0000000003` on ZooKeeper: a protected create). */
  node: string;
  /** Session owning the ephemeral registry node: the worker is alive while it exists. */
  session: string | null;
  /** Registry node creation time (registration). */
  registered: number;
  /** Last write of the registry node (registration or rebalance). */
  updated: number;
  /** Keys this worker holds working claims on. */
  running: TaskKey[];
}

/** What "retry all failed" did: how many it retried, and what it could not. */
export interface RetryAllResult {
  retried: number;
  errors: { key: TaskKey; message: string }[];
}

const FAILED_LIMIT = 1000;

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

function codeOf(err: unknown): string | undefined {
  return isZoottError(err) ? err.code : undefined;
}

/** Runs `fn` over `items` with at most `width` calls in flight. */
async function pooled<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>) {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    range(Math.min(width, items.length)).map(async () => {
      while (next < items.length) {
        const index = next++;
        out[index] = await fn(items[index]!);
      }
    }),
  );
  return out;
}

/**
 * Everything the dashboard shows, read through the engine where it has a call for it and
 * straight from the documented layout (docs/protocol.md) where it does not (failed records,
 * the registry, entry ages). One engine per world, made on first use.
 */
export class DashboardData {
  private readonly engines = new Map<string, Engine>();

  constructor(
    readonly coordinator: Coordinator,
    private readonly logger: EngineLogger,
  ) {}

  engine(world: string): Engine {
    let engine = this.engines.get(world);
    if (!engine) {
      engine = createEngine(this.coordinator, {
        world: validateWorldName(world),
        logger: this.logger,
      });
      this.engines.set(world, engine);
    }
    return engine;
  }

  private async layout(world: string): Promise<WorldLayout> {
    return (await this.engine(world).context()).layout;
  }

  /** Worlds initialised in this namespace (each has a pending area), sorted. */
  async worlds(): Promise<string[]> {
    // Internal worlds (race coordination) are zoott's business, not a world to browse.
    return listWorlds(this.coordinator);
  }

  counts(world: string): Promise<AreaCounts> {
    return this.engine(world).counts();
  }

  tree(world: string, root?: TaskKey): Promise<TreeNode[]> {
    return this.engine(world).tree(root);
  }

  task(world: string, key: TaskKey): Promise<TaskRecord | null> {
    return this.engine(world).task(key);
  }

  /**
   * The oldest pending entry: per bucket the lowest sequence number (the bucket's creation
   * order) among entries that are neither claimed nor dead, then the earliest `ctime`.
   */
  async oldestPending(world: string): Promise<OldestPending | null> {
    const layout = await this.layout(world);
    const coordinator = this.coordinator;
    const firsts = await Promise.all(
      bucketNumbers(layout).map(async (bucket) => {
        const listing = await listBucket(coordinator, layout, bucket, ['pending', 'working']);
        const claimed = new Set(listing.working.map((record) => record.encodedKey));
        let best: { path: string; key: string; seq: number } | null = null;
        for (const entry of waitingEntries(listing.pending, claimed))
          if (!best || entry.seq < best.seq)
            best = { path: entry.path, key: entry.encodedKey, seq: entry.seq };
        if (!best) return null;
        const stat = await coordinator.exists(best.path);
        return stat ? { key: best.key.split(KEY_SEPARATOR), since: stat.ctime } : null;
      }),
    );
    let oldest: OldestPending | null = null;
    for (const first of firsts)
      if (first && (!oldest || first.since < oldest.since)) oldest = first;
    return oldest;
  }

  /** The dead-letter list from the failed records, newest failure first, at most `limit`. */
  async failed(world: string, limit = FAILED_LIMIT): Promise<FailedList> {
    const layout = await this.layout(world);
    const coordinator = this.coordinator;
    const listed = await Promise.all(
      bucketNumbers(layout).map(async (bucket) =>
        (await listBucket(coordinator, layout, bucket, ['failed'])).failed.map(
          (record) => record.path,
        ),
      ),
    );
    const paths = listed.flat();
    const records = await pooled(paths, 64, async (path) => {
      try {
        const got = await coordinator.get(path);
        const rec = decodeJson<FailedRecord>(got.data, path);
        const encoded = path.slice(path.lastIndexOf('/') + 1);
        // Every failure as { code, message }, whoever wrote the record and when.
        const error = readTaskError(rec?.error) ?? { code: UNCODED_ERROR, message: '' };
        return { ...rec, error, key: encoded.split(KEY_SEPARATOR) } as FailedTask;
      } catch (err) {
        if (codeOf(err) === 'NO_NODE') return null;
        throw err;
      }
    });
    const tasks = records.filter((r): r is FailedTask => r !== null);
    tasks.sort((a, b) => (b.failedAt ?? 0) - (a.failedAt ?? 0));
    return { tasks: tasks.slice(0, limit), total: tasks.length };
  }

  /** The worker registry of a world with each worker's working claims. */
  async workers(world: string): Promise<WorkerView[]> {
    const layout = await this.layout(world);
    const coordinator = this.coordinator;
    const [nodes, claims] = await Promise.all([
      coordinator
        .children(layout.registry)
        .catch((err) => (codeOf(err) === 'NO_NODE' ? [] : Promise.reject(err))),
      this.workingClaims(layout),
    ]);
    const views = await Promise.all(
      nodes.sort().map(async (node): Promise<WorkerView | null> => {
        const path = `${layout.registry}/${node}`;
        try {
          const got = await coordinator.get(path);
          // A persistent node is no worker (registrations are ephemeral): not shown alive.
          if (got.stat.ephemeralOwner === null) return null;
          let info: Partial<WorkerInfo> = {};
          try {
            info = decodeJson<Partial<WorkerInfo>>(got.data, path) ?? {};
          } catch {
            // A foreign or half-written node still shows up, with what the stat says.
          }
          return {
            ...info,
            node,
            session: got.stat.ephemeralOwner,
            registered: got.stat.ctime,
            updated: got.stat.mtime,
            running: [],
          };
        } catch (err) {
          if (codeOf(err) === 'NO_NODE') return null;
          throw err;
        }
      }),
    );
    const live = views.filter((v): v is WorkerView => v !== null);
    for (const { key, claim } of claims) {
      // A worker id identifies the worker; its session tells re-registrations apart.
      const owner =
        live.find((v) => v.id === claim.worker && v.session === claim.session) ??
        live.find((v) => v.id === claim.worker);
      owner?.running.push(key);
    }
    return live;
  }

  private async workingClaims(layout: WorldLayout) {
    const coordinator = this.coordinator;
    const listed = await Promise.all(
      bucketNumbers(layout).map(
        async (bucket) => (await listBucket(coordinator, layout, bucket, ['working'])).working,
      ),
    );
    const out = await pooled(listed.flat(), 64, async ({ encodedKey, path }) => {
      try {
        const got = await coordinator.get(path);
        if (got.stat.ephemeralOwner === null) return null; // not a claim: no session holds it
        return {
          key: encodedKey.split(KEY_SEPARATOR),
          claim: decodeJson<ClaimIdentity>(got.data, path),
        };
      } catch {
        return null;
      }
    });
    return out.filter((x) => x !== null);
  }

  retry(world: string, key: TaskKey): Promise<void> {
    return this.engine(world).retry(key);
  }

  cancel(world: string, key: TaskKey, subtree: boolean): Promise<TaskKey[]> {
    return this.engine(world).cancel(key, { subtree });
  }

  /** Retries every failed task; one failing retry does not stop the others. */
  async retryAll(world: string): Promise<RetryAllResult> {
    const { tasks } = await this.failed(world, Number.MAX_SAFE_INTEGER);
    const errors: RetryAllResult['errors'] = [];
    let retried = 0;
    await pooled(tasks, 16, async (task) => {
      try {
        await this.retry(world, task.key);
        retried++;
      } catch (err) {
        errors.push({ key: task.key, message: err instanceof Error ? err.message : String(err) });
      }
    });
    return { retried, errors };
  }
}
