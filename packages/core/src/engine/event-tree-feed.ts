import type { TreeEvent } from '../contract/coordinator.js';
import type { EngineContext } from './context.js';
import { codeOf } from './errors.js';
import { AREA, type Area, bucketName } from './layout.js';
import {
  applyNode,
  impliedSteps,
  liveTransition,
  type NodeRef,
  nodeRef,
  nodesIn,
  stateOf,
  type TaskNodes,
  type TaskState,
} from './task-transitions.js';
import type { EngineEventType } from './types.js';

/** The areas whose nodes make a task's state: pending entries, claims, completed records. */
export const STATE_AREAS: readonly Area[] = [AREA.pending, AREA.working, AREA.completed];

/** One bucket's tasks: their nodes by encoded key. */
export type BucketTasks = Map<string, TaskNodes>;

/** Where a feed sends what it saw: a task's events, in order, and its state after them. */
export type TransitionSink = (
  bucket: number,
  encodedKey: string,
  types: readonly EngineEventType[],
  after: TaskState | undefined,
) => void;

/**
 * Lists one bucket's three areas (pending first: a task that moves on between the reads shows
 * further along, never back), each with a watch when `watch` gives one for the area.
 */
export async function listBucket(
  ctx: EngineContext,
  bucketNo: number,
  watch?: (area: Area) => (() => void) | undefined,
): Promise<BucketTasks> {
  const listings = await Promise.all(
    STATE_AREAS.map((area) => {
      const watcher = watch?.(area);
      return ctx.coordinator.children(
        ctx.layout.bucketPath(area, bucketNo),
        watcher ? { watch: watcher } : undefined,
      );
    }),
  );
  const out: BucketTasks = new Map();
  STATE_AREAS.forEach((area, index) => {
    for (const name of listings[index]!) {
      const ref = nodeRef(area, bucketNo, name);
      if (!ref) continue;
      applyNode(nodesIn(out, ref.encodedKey), ref, true);
    }
  });
  return out;
}

/** Tells `sink` the implied steps of every task whose state differs from `before` to `after`. */
export function diffBucket(
  bucketNo: number,
  before: BucketTasks,
  after: BucketTasks,
  sink: TransitionSink,
): void {
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const now = stateOf(after.get(key));
    const steps = impliedSteps(stateOf(before.get(key)), now);
    if (steps.length > 0) sink(bucketNo, key, steps, now);
  }
}

interface NodeChange {
  ref: NodeRef;
  present: boolean;
}

/**
 * The event stream's source on a coordinator with tree watches (ZooKeeper 3.6+, the memory
 * adapter): one persistent recursive watch per area reports every node created or deleted, in
 * commit order, so every transition of every task is seen, however fast it was.
 *
 * A bucket's state is its listing, and the changes reported after the watches were in place
 * are applied to it one by one. The listing may be taken before or after any of the changes
 * reported while it was out (a reply and an event can come in together), so those are
 * buffered, undone from the listing in reverse (a node's state before its first change is the
 * opposite of that change), and then applied again with their events: the result is exact
 * whichever way each one fell.
 *
 * After a connection loss (events missed until each watch is in place again: its `reset`),
 * every bucket is listed again once all three watches are back, and each task's state before
 * the loss is compared with its state after it: the steps it must have taken come out once
 * (see `impliedSteps`), then the changes reported since.
 */
export class TreeFeed {
  private readonly tasks = new Map<number, BucketTasks>();
  /** Changes of buckets whose listing is out: applied once it is in. */
  private readonly buffered = new Map<number, NodeChange[]>();
  /** Areas whose watch is in place since the last connection trouble. */
  private readonly live = new Set<Area>();
  private readonly stops: (() => void)[] = [];
  private resyncing: Promise<void> | null = null;
  private resyncAgain = false;
  /** Buckets whose first listing is in: a later listing is compared with what is known. */
  private readonly installed = new Set<number>();
  /** What ended a resync other than connection trouble. */
  private failure: unknown = null;
  private closed = false;
  private readonly prefixes: { area: Area; prefix: string }[];

  constructor(
    private readonly ctx: EngineContext,
    private readonly sink: TransitionSink,
    private readonly fail: (err: unknown) => void,
  ) {
    // `/zoott_<area>/<world>/` and the bucket's name after it.
    this.prefixes = STATE_AREAS.map((area) => {
      const first = ctx.layout.bucketPath(area, 0);
      return { area, prefix: first.slice(0, first.length - bucketName(0).length) };
    });
  }

  /**
   * Registers the watches and takes the first listing of every bucket. Resolves `false` (with
   * nothing left registered) when the coordinator or server has no tree watches.
   */
  async start(): Promise<boolean> {
    const watchTree = this.ctx.coordinator.watchTree?.bind(this.ctx.coordinator);
    if (!watchTree) return false;
    const registered = await Promise.allSettled(
      this.prefixes.map(({ area }) =>
        watchTree(this.ctx.layout.areaRoot(area), (e) => this.onEvent(area, e)),
      ),
    );
    for (const result of registered)
      if (result.status === 'fulfilled') this.stops.push(result.value);
    const refused = registered.find((r) => r.status === 'rejected');
    if (refused) {
      this.close();
      if (codeOf(refused.reason) === 'UNIMPLEMENTED') return false;
      throw refused.reason;
    }
    for (const { area } of this.prefixes) this.live.add(area);
    this.scheduleResync();
    // Resyncs run one at a time: a reset during the first listing queues another after it.
    while (this.resyncing) await this.resyncing;
    if (this.failure !== null) throw this.failure;
    return true;
  }

  /** The connection dropped: events are missed from now until every watch says `reset`. */
  connectionTrouble(): void {
    this.live.clear();
  }

  /** The working keys of bucket `b` as the feed knows them. */
  working(bucketNo: number): string[] {
    const out: string[] = [];
    for (const [key, nodes] of this.tasks.get(bucketNo) ?? [])
      if (stateOf(nodes)?.state === 'working') out.push(key);
    return out;
  }

  close(): void {
    this.closed = true;
    for (const stop of this.stops.splice(0)) stop();
  }

  private onEvent(area: Area, event: TreeEvent): void {
    if (this.closed) return;
    if (event.type === 'reset') {
      this.live.add(area);
      if (this.live.size === this.prefixes.length) this.scheduleResync();
      return;
    }
    // Until every watch is back, a resync will list what changed meanwhile: a change one
    // watch reports could be a later step than what another, not back yet, missed.
    if (this.live.size < this.prefixes.length || event.type === 'dataChanged') return;
    const ref = this.refOf(area, event.path);
    if (!ref) return;
    const change = { ref, present: event.type === 'created' };
    const waiting = this.buffered.get(ref.bucket);
    if (waiting) waiting.push(change);
    else this.apply(change, true);
  }

  /** The bucket node a path is in, or `null` for the area or bucket nodes themselves. */
  private refOf(area: Area, path: string): NodeRef | null {
    const prefix = this.prefixes.find((p) => p.area === area)!.prefix;
    if (!path.startsWith(prefix)) return null;
    const rest = path.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash < 0) return null;
    const bucket = Number(rest.slice(0, slash));
    if (!Number.isInteger(bucket) || bucket < 0 || bucket >= this.ctx.layout.buckets) return null;
    const name = rest.slice(slash + 1);
    return name.includes('/') ? null : nodeRef(area, bucket, name);
  }

  /** Applies a change to its task; `emit`: tell its event, if the state changed. */
  private apply({ ref, present }: NodeChange, emit: boolean): void {
    let bucket = this.tasks.get(ref.bucket);
    if (!bucket) {
      bucket = new Map();
      this.tasks.set(ref.bucket, bucket);
    }
    const nodes = nodesIn(bucket, ref.encodedKey);
    const before = stateOf(nodes);
    applyNode(nodes, ref, present);
    const after = stateOf(nodes);
    if (!after) bucket.delete(ref.encodedKey);
    const type = emit ? liveTransition(before, after) : null;
    if (type) this.sink(ref.bucket, ref.encodedKey, [type], after);
  }

  private scheduleResync(): void {
    if (this.resyncing) {
      this.resyncAgain = true;
      return;
    }
    const first = this.installed.size < this.ctx.layout.buckets;
    this.resyncing = this.resync()
      .catch((err: unknown) => {
        // Connection trouble: the next reset resyncs again, or, when every watch still counts
        // as live (a request timed out on a connection that stayed up: no reset will come),
        // this one is run again. Anything else ends the stream (the first listing's trouble
        // too: it is `start`'s to throw).
        if (isConnectionTrouble(err) && !first) {
          if (this.live.size === this.prefixes.length) this.resyncAgain = true;
          return;
        }
        this.failure = err;
        if (!first) this.fail(err);
      })
      .finally(() => {
        this.resyncing = null;
        if (this.resyncAgain && !this.closed) {
          this.resyncAgain = false;
          this.scheduleResync();
        }
      });
  }

  /**
   * Lists every bucket again and takes each listing in (see the class comment).
   *
   * A resync runs after a gap (every watch said `reset`), and its listing is the one anchor
   * for the changes reported from then on. Changes still buffered from an earlier resync
   * whose listing failed are dropped: a gap lies between them and this listing, so undoing
   * them from it would guess; the bucket's last known state against this listing gives the
   * steps they stood for (see `impliedSteps`). A bucket whose listing fails keeps buffering
   * until the next resync: applied to its state from before the gap, its changes would tell
   * a task's last step without the steps of the gap (a task queued and started while the
   * stream was away would come out as `completed` alone).
   */
  private async resync(): Promise<void> {
    const buckets = this.ctx.layout.buckets;
    for (let b = 0; b < buckets; b++) this.buffered.set(b, []);
    await Promise.all(
      Array.from({ length: buckets }, async (_, bucketNo) => {
        const listed = await listBucket(this.ctx, bucketNo);
        if (!this.closed) this.install(bucketNo, listed);
      }),
    );
  }

  /** Takes bucket `b`'s listing in: its first is where the stream starts, not changes. */
  private install(bucketNo: number, listed: BucketTasks): void {
    const first = !this.installed.has(bucketNo);
    this.installed.add(bucketNo);
    const changes = this.buffered.get(bucketNo) ?? [];
    this.buffered.delete(bucketNo);
    // The state when the buffered changes began: each undone from the listing, last first.
    for (let i = changes.length - 1; i >= 0; i--) {
      const { ref, present } = changes[i]!;
      applyNode(nodesIn(listed, ref.encodedKey), ref, !present);
    }
    for (const [key, nodes] of listed) if (!stateOf(nodes)) listed.delete(key);
    if (!first) diffBucket(bucketNo, this.tasks.get(bucketNo) ?? new Map(), listed, this.sink);
    this.tasks.set(bucketNo, listed);
    for (const change of changes) this.apply(change, true);
  }
}

/** Failures that only mean the connection is down for now (or the session must be renewed). */
export function isConnectionTrouble(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'CONNECTION_LOSS' || code === 'OPERATION_TIMEOUT' || code === 'SESSION_EXPIRED';
}
