import type { Coordinator } from '@zoott/core';
import { lastReplyAt } from './health.js';
import { type KillDeadline, monotonicMs } from './jobs/keeper-link.js';

// Kills a worker's jobs before its server could expire a session it stopped hearing from.
//
// The server expires a session one timeout T (the negotiated one) after it last received a
// packet from the client; packets it sends do not count. The client knows R, when it last
// received bytes from the server (`lastReplyAt`), and nothing else of the server's clock. R is
// no lower bound of the server's last hearing: replies to requests follow their request, but
// notifications and late replies arrive without the client having written since. What bounds
// the gap is the keep-alive (zk-adapter keep-alive.ts): the client writes at least every T/3,
// so every write sent up to the cut reached the server, and the last of them went out at most
// T/3 before R (a write between R and the cut may be lost). The server's last hearing S is
// thus at least R - T/3, and it expires the session no earlier than S + T >= R + 2T/3.
//
// The kill goes at R + T - (T/3 + T/10): T/10 (400 ms at 4 s) covers the network's one-way
// delay, this process's timer firing late and the kill itself (one cgroup.kill write, or a
// signal per process group). The client's own read timeout calls the connection dropped only
// at R + 2T/3 and the session lost a whole T after that, so this comes before both: it is
// driven by R, not by the `suspended` event. Silence shorter than that (a blip, a slow reply)
// kills nothing; a reply that arrives moves R and the deadline with it.
//
// Two clocks count to that moment, so that a worker whose own timers run late still kills in
// time: this process's ExpiryKill, and each job's keeper (a process of its own, keeper-main.ts),
// which receives the deadline R + limit with every heartbeat (every 250 ms at most), converted
// to CLOCK_MONOTONIC, and kills the job when it passes on its own timer. A loaded host holds up
// the worker's event loop (its heartbeat, its timer, its kill) far more than the keeper's,
// which has nothing else to do; a stopped or frozen worker sends nothing, and the keeper kills
// at the last deadline it was given. R itself is stamped by the worker's event loop when it
// reads the bytes: a reply read late makes the deadline later by as much, which the T/10
// margin covers.

/** How long the server may be silent before a worker kills its jobs, at session timeout `timeoutMs`. */
export function unheardLimitMs(timeoutMs: number): number {
  return Math.floor(timeoutMs - timeoutMs / 3 - timeoutMs / 10);
}

/** How often the jobs are killed again while the silence lasts (one that started late). */
const REKILL_MS = 100;

/** What {@link ExpiryKill} is given: a clock in `lastReplyAt`'s terms, and the kill. */
export interface ExpiryKillOptions {
  /** SIGKILLs every job; `first` is true once per silence (for the log). */
  kill(silentMs: number, first: boolean): void;
  /** Now in ms, in the terms of the coordinator's `lastReplyAt` (default: the monotonic clock). */
  now?: () => number;
}

/** The monotonic clock `lastReplyAt` is read on: performance's, as ms since the epoch. */
export function monotonicNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Watches how long the coordinator's server has been silent, and past
 * {@link unheardLimitMs} of its negotiated session timeout kills every job (again every
 * 100 ms while the silence lasts). A coordinator without `lastReplyAt` (the memory adapter,
 * whose server starts a session's expiry timer the moment `disconnect()` suspends it) is
 * counted from its `suspended` event. Nothing is watched while the session is lost (the loss
 * kills the jobs at once) or not open.
 */
export class ExpiryKill {
  private timer: NodeJS.Timeout | null = null;
  /** When the `suspended` event came, while suspended: the start of silence without a clock. */
  private suspendedAt: number | null = null;
  /** The last-heard time the jobs were killed for: one `first` per silence. */
  private killedFor: number | null = null;
  private closed = false;
  private readonly off: () => void;
  private readonly now: () => number;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly options: ExpiryKillOptions,
  ) {
    this.now = options.now ?? monotonicNow;
    this.off = coordinator.onSession((event) => {
      if (event.type === 'suspended') this.suspendedAt = this.now();
      else this.suspendedAt = null;
      this.check();
    });
    this.check();
  }

  close(): void {
    this.closed = true;
    this.off();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** When the server was last heard from, or null while that is not known or not counted. */
  private heardAt(): number | null {
    const state = this.coordinator.state;
    if (state !== 'connected' && state !== 'suspended') return null;
    return lastReplyAt(this.coordinator) ?? this.suspendedAt;
  }

  private check(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.closed) return;
    const heard = this.heardAt();
    if (heard === null) return;
    // The negotiated timeout, read each time: a renewed session may have another.
    const limit = unheardLimitMs(this.coordinator.sessionTimeoutMs);
    const silent = this.now() - heard;
    let wait = limit - silent;
    if (wait <= 0) {
      const first = this.killedFor !== heard;
      this.killedFor = heard;
      this.options.kill(Math.round(silent), first);
      wait = REKILL_MS;
    }
    this.timer = setTimeout(() => this.check(), Math.ceil(wait));
    this.timer.unref();
  }
}

/**
 * The deadline a job keeper kills a job of `coordinator`'s worker at, on its own clock: the
 * moment {@link ExpiryKill} counts to (the last reply plus {@link unheardLimitMs}), on
 * CLOCK_MONOTONIC. None without a last reply (the memory adapter: the worker's own kill counts
 * from its suspension), nor while the session is not open (a lost one kills at once).
 */
export function unheardDeadline(coordinator: Coordinator): KillDeadline {
  return () => {
    const state = coordinator.state;
    if (state !== 'connected' && state !== 'suspended') return null;
    const heard = lastReplyAt(coordinator);
    if (heard === null) return null;
    const heardAt = monotonicMs() - (monotonicNow() - heard);
    return { at: heardAt + unheardLimitMs(coordinator.sessionTimeoutMs), heardAt };
  };
}
