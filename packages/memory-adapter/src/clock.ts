/**
 * Time as the memory server sees it. Injecting a clock lets tests move time by hand, so
 * session timeouts and node timestamps are deterministic.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms`; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Wall-clock time and real (unref'd) timers: a pending session timeout never keeps Node alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

interface ManualTimer {
  due: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. Timers run inside `advance`, earliest first (ties in
 * the order they were set), each seeing `now()` equal to its due time.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Set<ManualTimer>();

  constructor(start = 0) {
    if (!Number.isFinite(start))
      throw new RangeError(`ManualClock start must be finite, got ${start}`);
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** Number of timers waiting to run. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer: ManualTimer = { due: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(timer);
    return timer;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as ManualTimer);
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way, in order. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) {
      throw new RangeError(`ManualClock.advance needs a finite ms >= 0, got ${ms}`);
    }
    const target = this.current + ms;
    for (;;) {
      let next: ManualTimer | undefined;
      for (const timer of this.timers) {
        if (
          timer.due <= target &&
          (!next || timer.due < next.due || (timer.due === next.due && timer.seq < next.seq))
        ) {
          next = timer;
        }
      }
      if (!next) break;
      this.timers.delete(next);
      this.current = next.due;
      next.fn();
    }
    this.current = target;
  }
}
