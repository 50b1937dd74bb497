import { KEY_SEPARATOR } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { completedRecord } from './parent-results.js';
import { parseProgress, progressPath, type TaskProgress } from './progress.js';

/**
 * The progress side of `events({ progress: true })`: an exists watch on the progress node of
 * every task the stream sees working, re-armed after each change while the task still works.
 * A change reads the node once and comes out as a `progress` event. Tasks that report
 * nothing cost one exists call per run.
 */
export class ProgressWatches {
  /** Encoded keys working now, per bucket (from the stream's last listing). */
  private readonly working = new Map<number, Set<string>>();
  /** Encoded keys with a watch set that has not fired. */
  private readonly armed = new Set<string>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly emit: (key: string, progress: TaskProgress) => void,
    private readonly closed: () => boolean,
  ) {}

  /** The working keys of one bucket after a listing: new ones get a watch. */
  sync(bucket: number, working: Iterable<string>): void {
    const now = new Set(working);
    this.working.set(bucket, now);
    for (const key of now) if (!this.armed.has(key)) this.arm(bucket, key);
  }

  /** One task was seen starting to work (a tree watch's event): watch its progress node. */
  started(bucket: number, key: string): void {
    const now = this.working.get(bucket) ?? new Set<string>();
    this.working.set(bucket, now);
    now.add(key);
    if (!this.armed.has(key)) this.arm(bucket, key);
  }

  /** One task was seen ending its run: its watch, when it fires, is not set again. */
  stopped(bucket: number, key: string): void {
    this.working.get(bucket)?.delete(key);
  }

  /** A lost session dropped every watch: arm them again on the next listing. */
  reset(): void {
    this.armed.clear();
  }

  private stillWorking(bucket: number, key: string): boolean {
    return !this.closed() && (this.working.get(bucket)?.has(key) ?? false);
  }

  /**
   * Watches one working task's progress node. `first`: the task was just seen working, and
   * what it reported before the watch was set (a first report races the listing that shows
   * the task working) comes out at once.
   */
  private arm(bucket: number, key: string, first = true): void {
    const coordinator = this.ctx.coordinator;
    const path = progressPath(this.ctx.layout, key.split(KEY_SEPARATOR));
    // A completion deletes the node right after its last write: then the last report is
    // the one the completed record took along.
    const read = () =>
      coordinator
        .get(path)
        .then(
          (got) => parseProgress(got.data),
          async () => (await completedRecord(this.ctx, key.split(KEY_SEPARATOR)))?.report ?? null,
        )
        .then(
          (progress) => {
            if (progress && !this.closed()) this.emit(key, progress);
          },
          () => {},
        );
    this.armed.add(key);
    coordinator
      .exists(path, {
        watch: (event) => {
          this.armed.delete(key);
          if (!this.stillWorking(bucket, key)) return;
          this.arm(bucket, key, false);
          if (event.type !== 'deleted') void read();
        },
      })
      .then(
        (stat) => {
          if (first && stat) void read();
        },
        () => this.armed.delete(key),
      );
  }
}
