import { systemEngineClock } from './clock.js';
import type { EngineClock } from './types.js';

/** What a sleep in progress needs to be cut short. */
interface Pending {
  resolve: () => void;
  cancel: () => void;
}

/**
 * A wait that other parts of the engine cut short, many times a second: the worker's loop
 * sleeps on one between claims and every watch, completion and signal wakes it.
 *
 * Why not an `AbortController` per wake-up (what the loop used): at 200 tasks/s a worker was
 * woken several times per task, and each wake-up cost a new controller, an event listener
 * and an abort event, about 7% of its CPU. Here a wake-up with no sleep in progress sets a
 * flag, and a sleep on the system clock is a plain timer. A clock of the caller's own (tests'
 * manual clocks) is still given an `AbortSignal`, as `EngineClock.sleep` asks.
 *
 * A wake-up is remembered: after `wake()`, `sleep` returns at once until `rearm()`. The
 * loop re-arms at the top of each round, so a change that arrives while it works is not
 * slept through.
 */
export class Alarm {
  private woken = false;
  private pending: Pending | null = null;

  constructor(private readonly clock: EngineClock) {}

  /** Whether a wake-up came since the last {@link rearm}. */
  get rung(): boolean {
    return this.woken;
  }

  /** Forgets the last wake-up: the next sleep waits its time. */
  rearm(): void {
    this.woken = false;
  }

  /**
   * Resolves after `ms`, or at once or early on a wake-up. One sleep at a time: a sleep begun
   * while another is in progress ends that one first (else it would outlive every wake-up).
   */
  sleep(ms: number): Promise<void> {
    if (this.woken) return Promise.resolve();
    this.end();
    return new Promise<void>((resolve) => {
      const done = () => {
        if (this.pending !== pending) return;
        this.pending = null;
        resolve();
      };
      let pending: Pending;
      if (this.clock === systemEngineClock) {
        const timer = setTimeout(done, Math.max(0, ms));
        pending = { resolve, cancel: () => clearTimeout(timer) };
      } else {
        const abort = new AbortController();
        pending = { resolve, cancel: () => abort.abort() };
        void this.clock.sleep(ms, abort.signal).then(done);
      }
      this.pending = pending;
    });
  }

  /** Ends the sleep in progress, or makes the next one return at once. */
  wake(): void {
    this.woken = true;
    this.end();
  }

  private end(): void {
    const pending = this.pending;
    if (pending === null) return;
    this.pending = null;
    pending.cancel();
    pending.resolve();
  }
}
