import type { ClaimGate } from '../claim/claimer.js';
import type { Coordinator } from '../contract/coordinator.js';
import { codeOf } from '../engine/errors.js';
import { perMs, type Rate } from './rate-spec.js';
import { limitsPath, readRateLimit } from './rate-store.js';

/**
 * How late a worker may be to take a start without losing it: a worker's bucket holds one
 * start plus this much time of its share. A loaded machine wakes a worker tens of ms after
 * its start is due; a bucket of exactly one start would drop what accrues meanwhile and the
 * world would run below its limit. It is also the most a worker saves up while idle: after a
 * quiet spell the world may start `limit x BURST_MS` more at once (plus one per worker).
 */
export const BURST_MS = 200;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * One worker's side of the world's cluster-wide rate limits: a token bucket per limited type
 * that fills at `limit / n`, where `n` is the number of live workers that serve the type (from
 * the registry the worker already watches). The shares sum to the limit; when a worker joins
 * or leaves, every worker recomputes its share as soon as its registry watch fires. Limits
 * are read once and then only when their watch fires: an idle worker costs ZooKeeper
 * nothing for them, and taking a start is arithmetic, never a request.
 */
export class RateLimits implements ClaimGate {
  /** A limit changed (or was never read): `refresh()` before the next claim. */
  dirty = true;
  private limits = new Map<string, Rate>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly coordinator: Coordinator,
    private readonly world: string,
    /** Live workers that serve `type`, this one included. */
    private readonly servers: (type: string) => number,
    /** Told when a limit changes (an idle worker wakes to re-read). */
    private readonly onChange: () => void = () => {},
  ) {}

  /** The limits in force, by type. */
  get current(): ReadonlyMap<string, Rate> {
    return this.limits;
  }

  /** Re-reads the limits, arming watches that set `dirty` on the next change. */
  async refresh(): Promise<void> {
    this.dirty = false;
    try {
      await this.read();
    } catch (err) {
      // The watches may not be armed: read again next time.
      this.dirty = true;
      throw err;
    }
  }

  private async read(): Promise<void> {
    const watch = () => {
      this.dirty = true;
      this.onChange();
    };
    const dir = limitsPath(this.world);
    let names: string[] = [];
    try {
      names = await this.coordinator.children(dir, { watch });
    } catch (err) {
      if (codeOf(err) !== 'NO_NODE') throw err;
      // No limit was ever set: hear about the folder appearing.
      if ((await this.coordinator.exists(dir, { watch })) !== null) this.dirty = true;
    }
    const read = await Promise.all(
      names.map((n) => readRateLimit({ coordinator: this.coordinator }, `${dir}/${n}`, watch)),
    );
    const limits = new Map<string, Rate>();
    for (const limit of read)
      if (limit) limits.set(limit.type, { count: limit.count, perMs: limit.perMs });
    for (const type of this.buckets.keys()) if (!limits.has(type)) this.buckets.delete(type);
    this.limits = limits;
  }

  /** This worker's share of `type`'s limit, in starts per ms; `null` when unlimited. */
  share(type: string): number | null {
    const limit = this.limits.get(type);
    if (!limit) return null;
    return perMs(limit) / Math.max(1, this.servers(type));
  }

  open(type: string, now: number): boolean {
    const bucket = this.fill(type, now);
    return bucket === null || bucket.tokens >= 1;
  }

  take(type: string, now: number): boolean {
    const bucket = this.fill(type, now);
    if (bucket === null) return true;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  refund(type: string): void {
    const bucket = this.buckets.get(type);
    if (bucket) bucket.tokens += 1;
  }

  nextAt(type: string, now: number): number {
    const bucket = this.fill(type, now);
    const share = this.share(type);
    if (bucket === null || share === null || bucket.tokens >= 1) return now;
    // From the bucket's time: a look with an earlier `now` left it later than `now`.
    return bucket.at + Math.ceil((1 - bucket.tokens) / share);
  }

  /** `type`'s share (starts per second) and the starts free at `now`; `null` when unlimited. */
  view(type: string, now: number): { perSecond: number; available: number } | null {
    const share = this.share(type);
    const bucket = this.fill(type, now);
    if (share === null || bucket === null) return null;
    return { perSecond: share * 1000, available: bucket.tokens };
  }

  /** The bucket of `type` filled up to `now`; `null` for a type without a limit. */
  private fill(type: string, now: number): Bucket | null {
    const share = this.share(type);
    if (share === null) return null;
    let bucket = this.buckets.get(type);
    if (!bucket) {
      // Empty at first: a worker that joins starts at its share, never with a burst.
      bucket = { tokens: 0, at: now };
      this.buckets.set(type, bucket);
    }
    const cap = 1 + share * BURST_MS;
    // A look may carry a time read before an await (a claimer checks the gate again once an
    // entry read returns): time it covers was already added by a later look. The bucket's
    // time only moves forward, else that span would be added twice and starts made up.
    bucket.tokens = Math.min(cap, bucket.tokens + Math.max(0, now - bucket.at) * share);
    bucket.at = Math.max(bucket.at, now);
    return bucket;
  }
}
