import type { Coordinator } from '../contract/coordinator.js';
import { Alarm } from '../engine/alarm.js';
import type { Claim, EngineClock } from '../engine/types.js';

/** How long a task runs before its worker starts watching for a cancel of it. */
export const DEFAULT_CANCEL_WATCH_AFTER_MS = 250;

/** The reason a retry's wait is cut with: a constant, so no abort builds a DOMException. */
const IDLE = Symbol('no task left to watch');

/** One running claim the watcher looks after; `ended` once its handler has returned. */
interface Watched {
  claim: Claim;
  /** When the watch is due (clock ms). */
  at: number;
  ended: boolean;
  fired: boolean;
  onCancelled: () => void;
  /** Cuts a wait between attempts to set the watch short when the handler returns. */
  retry?: AbortController;
}

/** What `watch` gives back: `end()` once the handler has returned. */
export interface CancelWatch {
  end(): void;
}

/**
 * Watches running claims' working nodes and calls a claim's `onCancelled` once when its node
 * goes (or is found held by another session) while its handler still runs: `cancel` deletes
 * the working node, so that is how a worker learns that the task it runs was cancelled.
 *
 * A watch is set only `afterMs` after its task started: most tasks end sooner, and an `exists`
 * per task would add a read to every claim. A cancel that lands before the watch is set is
 * still seen, because the first `exists` then finds the node gone. `end()` marks the handler
 * as returned: the worker's own settle deletes the node too, and that is no cancel.
 *
 * One watcher serves all of a worker's claims with one timer: every task waits the same
 * `afterMs`, so the claims fall due in the order they started, and a queue checked by a
 * single sleep replaces a timer, an abort controller and its abort (which builds a
 * DOMException) per task, a noticeable share of a busy worker's CPU.
 */
export class CancelWatcher {
  private queue: Watched[] = [];
  /** Index of the queue's first entry not yet due. */
  private head = 0;
  /** Entries not ended yet; at 0 the timer's sleep is cut short. */
  private live = 0;
  private sleeping = false;
  /** The one sleep, cut short when no entry is left (no controller per task that ends). */
  private readonly idle: Alarm;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly clock: EngineClock,
    private readonly afterMs: number,
  ) {
    this.idle = new Alarm(clock);
  }

  /** Starts looking after `claim`; its watch is set `afterMs` from now unless ended first. */
  watch(claim: Claim, onCancelled: () => void): CancelWatch {
    const watched: Watched = {
      claim,
      at: this.clock.now() + this.afterMs,
      ended: false,
      fired: false,
      onCancelled,
    };
    this.queue.push(watched);
    this.live++;
    if (!this.sleeping) void this.run();
    return {
      end: () => {
        if (watched.ended) return;
        watched.ended = true;
        watched.retry?.abort(IDLE);
        if (--this.live === 0) this.idle.wake();
      },
    };
  }

  /** Sleeps until the first entry is due, arms what is due, and again until none is left. */
  private async run(): Promise<void> {
    this.sleeping = true;
    try {
      while (this.live > 0) {
        this.idle.rearm();
        // Ended before their time (most tasks): nothing to wait for.
        while (this.queue[this.head]?.ended) this.head++;
        const first = this.queue[this.head];
        if (!first) break;
        const wait = first.at - this.clock.now();
        if (wait > 0) {
          await this.idle.sleep(wait);
          continue;
        }
        const now = this.clock.now();
        while (this.head < this.queue.length && this.queue[this.head]!.at <= now) {
          const watched = this.queue[this.head++]!;
          if (!watched.ended) void this.arm(watched);
        }
        this.compact();
      }
      // Every entry left has ended, or was handed on to its watch.
      this.queue = [];
      this.head = 0;
    } finally {
      this.sleeping = false;
    }
  }

  /** Drops the entries already handed on, once they are the larger part of the queue. */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private fire(watched: Watched): void {
    if (watched.fired || watched.ended) return;
    watched.fired = true;
    watched.onCancelled();
  }

  /** Sets the watch on `w`'s working node, again after any event but a deletion. */
  private async arm(watched: Watched): Promise<void> {
    const { claim } = watched;
    while (!watched.ended && !watched.fired) {
      try {
        const stat = await this.coordinator.exists(claim.workingPath, {
          watch: (event) => {
            if (event.type === 'deleted') this.fire(watched);
            // Anything else (a data change someone made by hand): keep watching.
            else void this.arm(watched);
          },
        });
        // Gone, or re-created by another session after a cancel and a re-queue.
        if (!stat || stat.ephemeralOwner !== claim.session) this.fire(watched);
        return;
      } catch {
        // Connection trouble: a lost session voids the claim on its own (the worker aborts
        // its handlers); a suspended one comes back, so look again a little later.
        const state = this.coordinator.state;
        if (state === 'lost' || state === 'closed') return;
        watched.retry = new AbortController();
        await this.clock.sleep(this.afterMs, watched.retry.signal);
      }
    }
  }
}
