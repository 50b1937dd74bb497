import type { SessionEventType } from '../contract/coordinator.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { codeOf } from './errors.js';
import { AREA, type Area, ENTRY_KIND, type EntryKind, parseEntryName } from './layout.js';
import { ProgressWatches } from './progress-events.js';
import type { EngineEvent, EngineEventType } from './types.js';

/** Failures that only mean the connection is down for now (or the session must be renewed). */
const CONNECTION_CODES: ReadonlySet<string> = new Set([
  'CONNECTION_LOSS',
  'OPERATION_TIMEOUT',
  'SESSION_EXPIRED',
]);

type Derived =
  | { state: 'pending'; entry: string; kind: Exclude<EntryKind, typeof ENTRY_KIND.dead> }
  | { state: 'working'; entry: string }
  | { state: 'failed' }
  | { state: 'completed' };

const LISTED: readonly Area[] = [AREA.pending, AREA.working, AREA.completed];

/**
 * Derives per-key states of one bucket from its pending, working and completed listings
 * (read in that order, so a task that completes between two reads shows as completed).
 */
function derive(p: string[], w: string[], c: string[]): Map<string, Derived> {
  const out = new Map<string, Derived>();
  const working = new Set(w);
  for (const n of p) {
    const e = parseEntryName(n);
    if (!e) continue;
    if (e.kind === ENTRY_KIND.dead) out.set(e.encodedKey, { state: 'failed' });
    else if (working.has(e.encodedKey)) out.set(e.encodedKey, { state: 'working', entry: n });
    else out.set(e.encodedKey, { state: 'pending', entry: n, kind: e.kind });
  }
  for (const k of c) out.set(k, { state: 'completed' });
  return out;
}

/** The event a state change stands for, or `null` when nothing observable happened. */
function transition(
  before: Derived | undefined,
  after: Derived | undefined,
): EngineEventType | null {
  // A completed task that leaves every listing was removed: by retention, almost always
  // (its record expired), or by a cancel; anything else that vanishes was cancelled.
  if (!after) return before ? (before.state === 'completed' ? 'removed' : 'cancelled') : null;
  switch (after.state) {
    case 'pending':
      if (before?.state === 'pending' && before.entry === after.entry) return null;
      if (before?.state === 'working' && before.entry === after.entry) return 'retried';
      return after.kind === ENTRY_KIND.retry ? 'retried' : 'queued';
    case 'working':
      return before?.state === 'working' && before.entry === after.entry ? null : 'started';
    case 'failed':
      return before?.state === 'failed' ? null : 'failed';
    case 'completed':
      return before?.state === 'completed' ? null : 'completed';
  }
}

/**
 * An async iterable of a world's state changes. Every bucket's three listings carry a
 * children watch; a fired watch re-lists that bucket only and the difference becomes events.
 * Changes undone between two listings (queued and completed in between) show as their end
 * state only; order is kept within a bucket, not across buckets.
 */
export function watchEvents(
  context: () => Promise<EngineContext>,
  signal?: AbortSignal,
  progress = false,
): AsyncIterable<EngineEvent> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<EngineEvent> {
      return new EventStream(context, signal, progress);
    },
  };
}

class EventStream implements AsyncIterator<EngineEvent> {
  private readonly queue: EngineEvent[] = [];
  private waiter: ((r: IteratorResult<EngineEvent>) => void) | null = null;
  private closed = false;
  private started: Promise<void> | null = null;
  private ctx: EngineContext | null = null;
  private readonly states = new Map<number, Map<string, Derived>>();
  private readonly armed = new Set<string>();
  private readonly dirty = new Set<number>();
  private pumping = false;
  /** Set once the first snapshot of every bucket is in: changes seen before wait for it. */
  private ready = false;
  private failure: unknown = null;
  private offSession: (() => void) | null = null;
  private progress: ProgressWatches | null = null;

  constructor(
    private readonly context: () => Promise<EngineContext>,
    private readonly signal?: AbortSignal,
    private readonly withProgress = false,
  ) {
    signal?.addEventListener('abort', () => this.finish(), { once: true });
  }

  async next(): Promise<IteratorResult<EngineEvent>> {
    if (!this.started) this.started = this.start();
    await this.started;
    if (this.failure) throw this.failure;
    const e = this.queue.shift();
    if (e) return { value: e, done: false };
    if (this.closed) return { value: undefined, done: true };
    return new Promise((resolve) => {
      this.waiter = resolve;
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
    const w = this.waiter;
    this.waiter = null;
    w?.({ value: undefined, done: true });
  }

  private async start(): Promise<void> {
    if (this.signal?.aborted) return this.finish();
    this.ctx = await this.context();
    const world = this.ctx.layout.world;
    if (this.withProgress)
      this.progress = new ProgressWatches(
        this.ctx,
        (k, progress) =>
          this.emit({ type: 'progress', key: k.split(KEY_SEPARATOR), world, progress }),
        () => this.closed,
      );
    const n = this.ctx.layout.buckets;
    this.offSession = this.ctx.coordinator.onSession((e) => this.onSession(e.type, n));
    await Promise.all(
      Array.from({ length: n }, async (_, b) => {
        this.states.set(b, await this.snapshot(b));
        this.syncProgress(b);
      }),
    );
    // A watch that fired (or a session event) during the first snapshot marked its bucket
    // dirty; listing it now compares with that snapshot, so the change comes out once.
    // Listed earlier, it would compare with nothing and then be overwritten by the older
    // first snapshot, and the next change would report it again.
    this.ready = true;
    if (this.dirty.size > 0 && !this.pumping) void this.pump();
  }

  private async snapshot(b: number): Promise<Map<string, Derived>> {
    const ctx = this.ctx!;
    const [p, w, c] = await Promise.all(
      LISTED.map((area) => {
        const id = `${area}${b}`;
        const arm = !this.armed.has(id);
        if (arm) this.armed.add(id);
        const listing = ctx.coordinator.children(
          ctx.layout.bucketPath(area, b),
          arm
            ? {
                watch: () => {
                  this.armed.delete(id);
                  this.changed(b);
                },
              }
            : undefined,
        );
        // A listing that failed set no watch: arm it again next time.
        return arm
          ? listing.catch((err: unknown) => {
              this.armed.delete(id);
              throw err;
            })
          : listing;
      }),
    );
    return derive(p!, w!, c!);
  }

  /**
   * Rides out connection trouble: a lost session took every watch with it, so they are armed
   * again; once requests flow again (reconnected, or a renewed session), every bucket is
   * listed again and compared with the last state seen, so what changed meanwhile still
   * comes out as events. Only a closed session ends the stream.
   */
  private onSession(type: SessionEventType, buckets: number): void {
    if (type === 'closed') {
      this.finish();
      return;
    }
    // A lost session dropped every watch; after a reconnect the client may not have set them
    // again either. Arming twice only means one more listing of a bucket.
    if (type === 'lost' || type === 'reconnected') {
      this.armed.clear();
      this.progress?.reset();
    }
    if (type === 'connected' || type === 'reconnected')
      for (let b = 0; b < buckets; b++) this.changed(b);
  }

  private changed(b: number): void {
    if (this.closed) return;
    this.dirty.add(b);
    if (this.ready && !this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.dirty.size > 0 && !this.closed) {
        const b = this.dirty.values().next().value as number;
        // Taken off before listing: a watch firing during the listing marks it again.
        this.dirty.delete(b);
        const before = this.states.get(b) ?? new Map<string, Derived>();
        let after: Map<string, Derived>;
        try {
          after = await this.snapshot(b);
        } catch (err) {
          // Connection trouble: the bucket stays dirty and the next session event (reconnected,
          // or connected after a renewal) lists it again.
          if (CONNECTION_CODES.has(codeOf(err) ?? '') && this.ctx!.coordinator.state !== 'closed') {
            this.dirty.add(b);
            return;
          }
          throw err;
        }
        this.states.set(b, after);
        this.syncProgress(b);
        const keys = new Set([...before.keys(), ...after.keys()]);
        for (const k of keys) {
          const type = transition(before.get(k), after.get(k));
          if (type) this.emit({ type, key: k.split(KEY_SEPARATOR), world: this.ctx!.layout.world });
        }
      }
    } catch (err) {
      this.failure = err;
      this.finish();
    } finally {
      this.pumping = false;
    }
  }

  private syncProgress(b: number): void {
    if (!this.progress) return;
    const working: string[] = [];
    for (const [k, d] of this.states.get(b) ?? []) if (d.state === 'working') working.push(k);
    this.progress.sync(b, working);
  }

  private emit(e: EngineEvent): void {
    if (this.closed) return;
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w({ value: e, done: false });
    } else this.queue.push(e);
  }
}
