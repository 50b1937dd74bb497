import type { SessionEventType } from '../contract/coordinator.js';
import { decodeJson } from '../contract/paths.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { readTaskError } from './errors.js';
import { ListingFeed } from './event-listing-feed.js';
import { TreeFeed } from './event-tree-feed.js';
import { AREA } from './layout.js';
import { ProgressWatches } from './progress-events.js';
import type { TaskState } from './task-transitions.js';
import type { EngineEvent, EngineEventType, EntryData } from './types.js';

/**
 * An async iterable of a world's state changes. With tree watches (ZooKeeper 3.6+, the memory
 * adapter) every transition of every task comes out once, in the order the tasks took them,
 * however fast: see `TreeFeed`. Without, each bucket is listed again when it changes and a
 * task's change between two listings comes out as the steps it must have taken (see
 * `ListingFeed`). Either way a task's events keep its order; events of different buckets may
 * interleave otherwise. Across a connection loss nothing is reported twice; see
 * docs/protocol.md, "Events", for what a stream says about the changes of the gap.
 */
export function watchEvents(
  context: () => Promise<EngineContext>,
  signal?: AbortSignal,
  progress = false,
  onReady?: () => void,
): AsyncIterable<EngineEvent> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<EngineEvent> {
      return new EventStream(context, signal, progress, onReady);
    },
  };
}

class EventStream implements AsyncIterator<EngineEvent> {
  /** Events in order; a failure's event waits for its error to be read. */
  private readonly queue: (EngineEvent | Promise<EngineEvent>)[] = [];
  private waiter: {
    resolve: (result: IteratorResult<EngineEvent>) => void;
    reject: (err: unknown) => void;
  } | null = null;
  private closed = false;
  private started: Promise<void> | null = null;
  private ctx: EngineContext | null = null;
  private failure: unknown = null;
  private offSession: (() => void) | null = null;
  private progress: ProgressWatches | null = null;
  private tree: TreeFeed | null = null;
  private listing: ListingFeed | null = null;

  constructor(
    private readonly context: () => Promise<EngineContext>,
    private readonly signal?: AbortSignal,
    private readonly withProgress = false,
    private readonly onReady?: () => void,
  ) {
    signal?.addEventListener('abort', () => this.finish(), { once: true });
  }

  async next(): Promise<IteratorResult<EngineEvent>> {
    if (!this.started)
      this.started = this.start().then(() => {
        if (this.closed) return;
        try {
          this.onReady?.();
        } catch {
          // The listener's own failure is not the stream's.
        }
      });
    await this.started;
    if (this.failure) throw this.failure;
    const head = this.queue.shift();
    if (head) return { value: await head, done: false };
    if (this.closed) return { value: undefined, done: true };
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  async return(): Promise<IteratorResult<EngineEvent>> {
    this.finish();
    return { value: undefined, done: true };
  }

  private finish(): void {
    this.closed = true;
    this.offSession?.();
    this.offSession = null;
    this.tree?.close();
    this.listing?.close();
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.resolve({ value: undefined, done: true });
  }

  private fail(err: unknown): void {
    this.failure = err;
    // A consumer waiting now hears the failure rather than an end.
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(err);
    this.finish();
  }

  private async start(): Promise<void> {
    if (this.signal?.aborted) return this.finish();
    const ctx = await this.context();
    this.ctx = ctx;
    if (this.withProgress)
      this.progress = new ProgressWatches(
        ctx,
        (key, progress) =>
          this.emit({
            type: 'progress',
            key: key.split(KEY_SEPARATOR),
            world: ctx.layout.world,
            progress,
          }),
        () => this.closed,
      );
    this.offSession = ctx.coordinator.onSession((e) => this.onSession(e.type));
    const sink = (
      bucketNo: number,
      key: string,
      types: readonly EngineEventType[],
      after?: TaskState,
    ) => this.tell(bucketNo, key, types, after);
    const tree = new TreeFeed(ctx, sink, (err) => this.fail(err));
    this.tree = tree;
    if (await tree.start()) {
      if (this.progress) for (let b = 0; b < ctx.layout.buckets; b++) this.syncProgress(b);
      return;
    }
    this.tree = null;
    this.listing = new ListingFeed(
      ctx,
      sink,
      (err) => this.fail(err),
      (b, working) => this.progress?.sync(b, working),
    );
    await this.listing.start();
  }

  private syncProgress(bucketNo: number): void {
    if (this.progress && this.tree) this.progress.sync(bucketNo, this.tree.working(bucketNo));
  }

  private onSession(type: SessionEventType): void {
    if (type === 'closed') {
      this.finish();
      return;
    }
    if (type === 'suspended' || type === 'lost') this.tree?.connectionTrouble();
    if (type === 'lost' || type === 'reconnected') this.progress?.reset();
    this.listing?.onSession(type);
    // The progress watches went with the connection: set them again on what is working now.
    if (this.tree && (type === 'reconnected' || type === 'connected'))
      for (let b = 0; b < (this.ctx?.layout.buckets ?? 0); b++) this.syncProgress(b);
  }

  /** A task's events, in order; a failure's or retry's with the error its entry records. */
  private tell(
    bucketNo: number,
    encodedKey: string,
    types: readonly EngineEventType[],
    after: TaskState | undefined,
  ): void {
    const ctx = this.ctx!;
    const key = encodedKey.split(KEY_SEPARATOR);
    for (const type of types) {
      const event: EngineEvent = { type, key, world: ctx.layout.world };
      const entry = after && 'entry' in after ? after.entry : null;
      if ((type === 'failed' || type === 'retried') && entry)
        this.emit(
          withError(ctx, event, `${ctx.layout.bucketPath(AREA.pending, bucketNo)}/${entry}`),
        );
      else this.emit(event);
    }
    if (this.progress && this.tree) {
      if (after?.state === 'working') this.progress.started(bucketNo, encodedKey);
      else this.progress.stopped(bucketNo, encodedKey);
    }
  }

  private emit(event: EngineEvent | Promise<EngineEvent>): void {
    if (this.closed) return;
    const waiter = this.waiter;
    if (waiter && this.queue.length === 0) {
      this.waiter = null;
      void Promise.resolve(event).then((value) => waiter.resolve({ value, done: false }));
    } else this.queue.push(event);
  }
}

/**
 * `event` with the error the entry at `path` records (`lastError`): one read, for failures
 * only. An entry gone meanwhile, or a read that fails, leaves the event without it.
 */
async function withError(
  ctx: EngineContext,
  event: EngineEvent,
  path: string,
): Promise<EngineEvent> {
  try {
    const got = await ctx.coordinator.get(path);
    const error = readTaskError(decodeJson<Partial<EntryData> | null>(got.data, path)?.lastError);
    // The reason, not the stack: `task(key)` has the whole record.
    return error ? { ...event, error: { code: error.code, message: error.message } } : event;
  } catch {
    return event;
  }
}
