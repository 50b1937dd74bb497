import type { SessionEventType } from '../contract/coordinator.js';
import type { EngineContext } from './context.js';
import {
  type BucketTasks,
  diffBucket,
  isConnectionTrouble,
  listBucket,
  STATE_AREAS,
  type TransitionSink,
} from './event-tree-feed.js';
import { stateOf } from './task-transitions.js';

/**
 * The event stream's source where there are no tree watches (ZooKeeper before 3.6, an
 * adapter without them): every bucket's three listings carry a children watch; a fired watch
 * lists that bucket again and each task's change since its last listing comes out as the
 * steps it must have taken (`impliedSteps`: a task queued and completed between two listings
 * is queued, started and completed). Attempts retried between two listings leave no trace.
 */
export class ListingFeed {
  private readonly tasks = new Map<number, BucketTasks>();
  private readonly armed = new Set<string>();
  private readonly dirty = new Set<number>();
  private pumping = false;
  /** Set once the first listing of every bucket is in: changes seen before wait for it. */
  private ready = false;
  private closed = false;

  constructor(
    private readonly ctx: EngineContext,
    private readonly sink: TransitionSink,
    private readonly fail: (err: unknown) => void,
    /** Told after every listing taken in: the bucket and its working keys. */
    private readonly listed: (bucket: number, working: string[]) => void,
  ) {}

  async start(): Promise<void> {
    const buckets = this.ctx.layout.buckets;
    await Promise.all(
      Array.from({ length: buckets }, async (_, bucketNo) => {
        this.tasks.set(bucketNo, await this.list(bucketNo));
        this.listed(bucketNo, this.working(bucketNo));
      }),
    );
    // A watch that fired (or a session event) during the first listing marked its bucket
    // dirty; listing it now compares with that listing, so the change comes out once.
    this.ready = true;
    if (this.dirty.size > 0 && !this.pumping) void this.pump();
  }

  close(): void {
    this.closed = true;
  }

  /**
   * Rides out connection trouble: a lost session took every watch with it, so they are armed
   * again; once requests flow again, every bucket is listed again and compared with the last
   * listing, so what changed meanwhile still comes out.
   */
  onSession(type: SessionEventType): void {
    // After a reconnect the client may not have set the watches again either. Arming twice
    // only means one more listing of a bucket.
    if (type === 'lost' || type === 'reconnected') this.armed.clear();
    if (type === 'connected' || type === 'reconnected')
      for (let b = 0; b < this.ctx.layout.buckets; b++) this.changed(b);
  }

  private working(bucketNo: number): string[] {
    const out: string[] = [];
    for (const [key, nodes] of this.tasks.get(bucketNo) ?? [])
      if (stateOf(nodes)?.state === 'working') out.push(key);
    return out;
  }

  private list(bucketNo: number): Promise<BucketTasks> {
    return listBucket(this.ctx, bucketNo, (area) => {
      const id = `${area}${bucketNo}`;
      if (this.armed.has(id)) return undefined;
      this.armed.add(id);
      return () => {
        this.armed.delete(id);
        this.changed(bucketNo);
      };
    }).catch((err: unknown) => {
      // A listing that failed set no watch: arm them again next time.
      for (const area of STATE_AREAS) this.armed.delete(`${area}${bucketNo}`);
      throw err;
    });
  }

  private changed(bucketNo: number): void {
    if (this.closed) return;
    this.dirty.add(bucketNo);
    if (this.ready && !this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.dirty.size > 0 && !this.closed) {
        const bucketNo = this.dirty.values().next().value as number;
        // Taken off before listing: a watch firing during the listing marks it again.
        this.dirty.delete(bucketNo);
        let after: BucketTasks;
        try {
          after = await this.list(bucketNo);
        } catch (err) {
          // Connection trouble: the bucket stays dirty and the next session event (reconnected,
          // or connected after a renewal) lists it again.
          if (isConnectionTrouble(err) && this.ctx.coordinator.state !== 'closed') {
            this.dirty.add(bucketNo);
            return;
          }
          throw err;
        }
        const before = this.tasks.get(bucketNo) ?? new Map();
        this.tasks.set(bucketNo, after);
        diffBucket(bucketNo, before, after, this.sink);
        this.listed(bucketNo, this.working(bucketNo));
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.pumping = false;
    }
  }
}
