import type { Acl } from '../contract/acl.js';
import type { Coordinator, Op } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { AREA_NAMES } from '../tree/areas.js';
import { KEY_SEPARATOR, type TaskKey, worldRoot } from '../tree/keys.js';
import { validateJsonData } from '../tree/names.js';
import type { EngineContext } from './context.js';
import { codeOf } from './errors.js';
import { bucketName, type WorldLayout } from './layout.js';
import { completedRecord } from './parent-results.js';
import type { Claim, TaskProgress } from './types.js';
import { ensureWorldPath } from './world-nodes.js';

export type { TaskLogLine, TaskProgress } from './types.js';

/**
 * The progress area, `/zoott_g/<world>/<bucket>/<key>`: one node per task that reported
 * progress or log lines, bucketed like the other areas (beside them, not one of them: the
 * claim and settle paths never touch it, so a task that reports nothing costs nothing).
 */
export const PROGRESS_AREA = AREA_NAMES.progress;
/** Log lines a task keeps (the newest; older ones are counted in `dropped`). */
export const MAX_LOG_LINES = 50;
/** Characters kept of one log line. */
export const MAX_LOG_LINE_CHARS = 500;
/** Largest progress value, as JSON. */
export const MAX_PROGRESS_BYTES = 2048;
/** Shortest time between two writes of one task's progress node. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 500;

/** Path of a task's progress node. */
export function progressPath(layout: WorldLayout, key: TaskKey): string {
  return `${layout.areaRoot(PROGRESS_AREA)}/${bucketName(layout.bucketOf(key))}/${key.join(KEY_SEPARATOR)}`;
}

/** Checks a progress value: JSON of at most {@link MAX_PROGRESS_BYTES}. */
export function checkProgressValue(value: unknown): void {
  if (value === undefined)
    throw new ZoottError('INVALID_TASK', 'progress: give a number or a JSON value', {
      field: 'progress',
    });
  validateJsonData(value, MAX_PROGRESS_BYTES, 'progress');
}

/** The progress node's data as stored, or `null` when it is absent or not of this shape. */
export function parseProgress(data: Uint8Array): TaskProgress | null {
  try {
    const progress = decodeJson<Partial<TaskProgress> | null>(data);
    if (!progress || typeof progress.attempt !== 'number' || !Array.isArray(progress.log))
      return null;
    return { dropped: 0, ...progress } as TaskProgress;
  } catch {
    return null;
  }
}

/** What a task reported: its progress node, else its completed record's `report`, else `null`. */
export async function readProgress(ctx: EngineContext, key: TaskKey): Promise<TaskProgress | null> {
  try {
    return parseProgress((await ctx.coordinator.get(progressPath(ctx.layout, key))).data);
  } catch (err) {
    if (codeOf(err) !== 'NO_NODE') throw err;
  }
  // A completed task's report moved into its record (the node went with the completion).
  return (await completedRecord(ctx, key))?.report ?? null;
}

/**
 * Creates the bucket of a progress node, lazily, with the world root's ACL (and the world's
 * progress node when a world made by zoott 0.1.0 lacks it: `ensureWorldPath`, what `init`
 * does). Nothing above the world's own node is created here.
 */
async function ensureParents(
  coordinator: Coordinator,
  world: string,
  path: string,
): Promise<readonly Acl[]> {
  const { acl } = await coordinator.getAcl(worldRoot(world));
  const bucket = path.slice(0, path.lastIndexOf('/'));
  for (let round = 0; ; round++) {
    try {
      await coordinator.create(bucket, undefined, { acl });
      return acl;
    } catch (err) {
      const code = codeOf(err);
      if (code === 'NODE_EXISTS') return acl;
      if (code !== 'NO_NODE' || round > 0) throw err;
    }
    await ensureWorldPath(coordinator, bucket.slice(0, bucket.lastIndexOf('/')), acl);
  }
}

/**
 * Writes one claim's progress and log lines to its progress node, throttled: at most one
 * write per `intervalMs`, the latest state winning, one write in flight at a time. A node
 * left by an earlier attempt is overwritten; a later attempt's node (another worker took
 * the task over) or a vanished node (the task was cancelled) ends the writing.
 */
export class ProgressWriter {
  private state: TaskProgress;
  private version: number | null = null;
  private dirty = false;
  private stopped = false;
  private inFlight: Promise<void> | null = null;
  private timer: Promise<void> | null = null;
  private readonly path: string;
  private readonly halt = new AbortController();
  private aclCache: readonly Acl[] | null = null;

  constructor(
    private readonly ctx: EngineContext,
    claim: Claim,
    private readonly intervalMs = DEFAULT_PROGRESS_INTERVAL_MS,
  ) {
    this.path = progressPath(ctx.layout, claim.key);
    this.state = {
      attempt: claim.attempt,
      worker: claim.worker,
      updatedAt: ctx.clock.now(),
      log: [],
      dropped: 0,
    };
  }

  /** Records a progress value (checked now, written soon). */
  progress(value: unknown): void {
    checkProgressValue(value);
    this.state.progress = value;
    this.touch();
  }

  /** Records a log line (cut to {@link MAX_LOG_LINE_CHARS}; the oldest lines go first). */
  log(line: string): void {
    const text = String(line);
    this.state.log.push({ at: this.ctx.clock.now(), line: text.slice(0, MAX_LOG_LINE_CHARS) });
    if (this.state.log.length > MAX_LOG_LINES) {
      this.state.dropped += this.state.log.length - MAX_LOG_LINES;
      this.state.log.splice(0, this.state.log.length - MAX_LOG_LINES);
    }
    this.touch();
  }

  /** Writes what is not written yet and waits for it; never throws (progress is advisory). */
  async flush(): Promise<void> {
    this.halt.abort();
    await this.inFlight;
    if (this.dirty && !this.stopped) await this.write();
  }

  /** See {@link ProgressReporter.finish}. */
  async finish(): Promise<{ report: TaskProgress; remove: Op | null } | null> {
    // Written out first, so a stream watching the node sees the last lines too.
    await this.flush();
    this.stopped = true;
    const remove: Op | null =
      this.version === null ? null : { op: 'delete', path: this.path, version: this.version };
    return { report: { ...this.state, log: [...this.state.log] }, remove };
  }

  /** Stops at once: nothing more is written, a pending write is dropped. */
  close(): void {
    this.stopped = true;
    this.halt.abort();
  }

  private touch(): void {
    this.state.updatedAt = this.ctx.clock.now();
    this.dirty = true;
    if (this.stopped || this.timer || this.halt.signal.aborted) return;
    // The first report goes out at once, later ones at most once per interval.
    const wait = this.version === null && !this.inFlight ? 0 : this.intervalMs;
    this.timer = this.ctx.clock.sleep(wait, this.halt.signal).then(async () => {
      await this.inFlight;
      this.timer = null;
      if (this.dirty && !this.stopped && !this.halt.signal.aborted) {
        this.inFlight = this.write();
        await this.inFlight;
        this.inFlight = null;
        if (this.dirty) this.touch();
      }
    });
  }

  private async write(): Promise<void> {
    const coordinator = this.ctx.coordinator;
    this.dirty = false;
    const data = encodeJson(this.state);
    try {
      if (this.version !== null) {
        this.version = (await coordinator.set(this.path, data, this.version)).version;
        return;
      }
      const old = await coordinator.get(this.path).catch((err: unknown) => {
        if (codeOf(err) === 'NO_NODE') return null;
        throw err;
      });
      if (old) {
        const before = parseProgress(old.data);
        if (before && before.attempt > this.state.attempt) {
          this.stopped = true;
          return;
        }
        this.version = (await coordinator.set(this.path, data, old.stat.version)).version;
        return;
      }
      try {
        await coordinator.create(this.path, data, { acl: await this.acl() });
      } catch (err) {
        if (codeOf(err) !== 'NO_NODE') throw err;
        await coordinator.create(this.path, data, {
          acl: await ensureParents(coordinator, this.ctx.layout.world, this.path),
        });
      }
      this.version = 0;
    } catch (err) {
      // Someone else writes here now (a later attempt), the task is gone, or the connection
      // is down: progress is advisory, so it stops rather than fights or fails the task.
      const code = codeOf(err);
      if (code === 'BAD_VERSION' || code === 'NODE_EXISTS' || code === 'NO_NODE')
        this.stopped = true;
      else this.dirty = true;
      this.ctx.logger.debug?.({ path: this.path, err: String(err) }, 'progress not written');
    }
  }

  private async acl(): Promise<readonly Acl[]> {
    if (!this.aclCache)
      this.aclCache = (await this.ctx.coordinator.getAcl(worldRoot(this.ctx.layout.world))).acl;
    return this.aclCache;
  }
}

/** What a handler reports through: `ctx.progress`, `ctx.log`, and the worker's final flush. */
export interface ProgressReporter {
  /** True while nothing was reported: `finish` would give `null`, and has nothing to write. */
  readonly idle: boolean;
  progress(value: unknown): void;
  log(line: string): void;
  /** Writes what is left; the worker calls it before it settles the claim. */
  flush(): Promise<void>;
  /** Writes nothing more (the claim was cancelled or lost): a late write would leave a stray node. */
  close(): void;
  /**
   * For a completion: writes what is left, stops, and returns the final report with the
   * node to delete in the completion multi (at the version last written), or `null` when
   * nothing was reported. The report then lives on in the completed record.
   */
  finish(): Promise<{ report: TaskProgress; remove: Op | null } | null>;
}

/** A reporter that makes its writer (and its node) only once the handler reports something. */
export function progressReporter(
  ctx: EngineContext,
  claim: Claim,
  intervalMs = DEFAULT_PROGRESS_INTERVAL_MS,
): ProgressReporter {
  return new LazyReporter(ctx, claim, intervalMs);
}

/**
 * One object per task, its methods shared: every claim gets a reporter and most never
 * report, so it holds no closures of its own until a report makes its writer.
 */
class LazyReporter implements ProgressReporter {
  private writer: ProgressWriter | null = null;

  constructor(
    private readonly ctx: EngineContext,
    private readonly claim: Claim,
    private readonly intervalMs: number,
  ) {}

  get idle(): boolean {
    return this.writer === null;
  }

  private get(): ProgressWriter {
    this.writer ??= new ProgressWriter(this.ctx, this.claim, this.intervalMs);
    return this.writer;
  }

  progress(value: unknown): void {
    this.get().progress(value);
  }

  log(line: string): void {
    this.get().log(line);
  }

  async flush(): Promise<void> {
    await this.writer?.flush();
  }

  close(): void {
    this.writer?.close();
  }

  finish(): Promise<{ report: TaskProgress; remove: Op | null } | null> {
    return this.writer ? this.writer.finish() : NOTHING_REPORTED;
  }
}

/** `finish` of a reporter that reported nothing: one settled promise for every such task. */
const NOTHING_REPORTED: Promise<null> = Promise.resolve(null);

/**
 * After `complete` with {@link completion}'s options: when the completion's extra ops were
 * dropped (another of them, a reply node say, made its multi fail), the progress node's delete
 * went with them. It goes alone now, best effort: the completed record holds the report, and
 * a node left behind would silence the next run of this key (a writer yields to a later
 * attempt, and a re-queue counts attempts from 1 again).
 */
export function removeLeftProgress<T extends { extras?: { applied: boolean } }>(
  coordinator: Coordinator,
  final: { remove: Op | null } | null,
  outcome: T,
): T | Promise<T> {
  const remove = final?.remove;
  // Nearly always nothing to remove: the outcome as it is, no promise per completion.
  if (remove?.op !== 'delete' || outcome.extras?.applied !== false) return outcome;
  return coordinator.delete(remove.path, remove.version).then(
    () => outcome,
    () => outcome,
  );
}

/** `completion` of a run that reported nothing (most runs): one object for all of them. */
const NO_REPORT: { report?: TaskProgress; extraOps?: Op[] } = Object.freeze({});

/** `complete`'s options for a finished report: the report into the record, the node out. */
export function completion(final: { report: TaskProgress; remove: Op | null } | null): {
  report?: TaskProgress;
  extraOps?: Op[];
} {
  if (!final) return NO_REPORT;
  return final.remove
    ? { report: final.report, extraOps: [final.remove] }
    : { report: final.report };
}
