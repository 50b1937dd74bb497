import { setTimeout as sleep } from 'node:timers/promises';
import { type ErrorCode, isZoottError, ZoottError } from '@zoott/core';
import { toZoottError } from './convert.js';
import type { ResolvedOptions } from './options.js';
import type { ZkSession } from './session.js';
import type { LibClient } from './zk-wire/client-lib.js';

/** A request waiting for its reply; lost sessions and close() reject what is left. */
interface InFlight {
  /** Time (Date.now) after which the call fails with OPERATION_TIMEOUT. */
  deadline: number;
  reject(code: ErrorCode, text: string): void;
}

/**
 * One request on its way: its methods shared, so a request makes this object and the
 * library's callback, not a closure per way it can end.
 */
class Call implements InFlight {
  private settled = false;

  constructor(
    private readonly calls: Set<InFlight>,
    private readonly op: string,
    private readonly path: string | undefined,
    readonly deadline: number,
    private readonly resolve: (value: unknown) => void,
    private readonly fail: (err: unknown) => void,
  ) {}

  reject(code: ErrorCode, text: string): void {
    this.settle(new ZoottError(code, text, { op: this.op, path: this.path }));
  }

  settle(err: ZoottError | null, value?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.calls.delete(this);
    if (err) this.fail(err);
    else this.resolve(value);
  }
}

/** How a call behaves after CONNECTION_LOSS / OPERATION_TIMEOUT. */
export type RetryPolicy = 'retry' | 'once';

/**
 * The way every request travels: sent through the live client with a deadline (one sweeper
 * for all deadlines), retried across connection losses when that is safe, and settled in the
 * order the calls were issued.
 */
export class RequestPipeline {
  private readonly inFlight = new Set<InFlight>();
  /** Fails requests whose reply is overdue; runs only while requests are in flight. */
  private sweeper: NodeJS.Timeout | null = null;
  /** The calls of the current session generation still to settle, in issue order; see ordered(). */
  private order = new CallOrder(-1);

  constructor(
    private readonly session: ZkSession,
    private readonly opts: ResolvedOptions,
    /** Makes a server's error say more where the coordinator knows more (a missing chroot). */
    private readonly explain: (err: ZoottError) => ZoottError,
  ) {}

  /**
   * Sends one request through the library and waits for its reply, at most requestTimeoutMs.
   * `start` gets the live client and a callback taking the library's (error, result).
   */
  send<T>(
    op: string,
    path: string | undefined,
    start: (client: LibClient, done: (err: unknown, value?: T) => void) => void,
  ): Promise<T> {
    if (this.session.state === 'closed') {
      return Promise.reject(new ZoottError('CLOSED', undefined, { op, path }));
    }
    const client = this.session.client;
    if (this.session.state === 'lost' || !client) {
      return Promise.reject(
        new ZoottError('SESSION_EXPIRED', 'the session is lost; call renewSession()', {
          op,
          path,
        }),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const call = new Call(
        this.inFlight,
        op,
        path,
        Date.now() + this.opts.requestTimeoutMs,
        resolve as (value: unknown) => void,
        reject,
      );
      this.inFlight.add(call);
      this.armSweeper();
      try {
        start(client, (err, value) => {
          if (err) call.settle(this.explain(toZoottError(err, { op, path })));
          else call.settle(null, value);
        });
      } catch (err) {
        // The library validates some arguments with synchronous assertions.
        call.settle(toZoottError(err, { op, path }));
      }
    });
  }

  /**
   * Runs `attempt` and, for retryable failures (connection loss, no reply in time) under the
   * `retry` policy, again after a backoff and once connected, until maxAttempts or deadlineMs.
   * The first attempt is the call itself: a call that succeeds (nearly all) costs no layer.
   */
  withRetry<T>(policy: RetryPolicy, attempt: (attemptNo: number) => Promise<T>): Promise<T> {
    const started = Date.now();
    // A call is retried within its own session only: once that is lost, the call cannot
    // succeed (what it read or wrote belonged to the session), and it fails at once rather
    // than wait for a renewal to carry it into another session.
    const generation = this.session.generation;
    let first: Promise<T>;
    try {
      first = attempt(1);
    } catch (err) {
      return Promise.reject(err);
    }
    if (policy === 'once') return first;
    return first.catch((err: unknown) => this.retry(attempt, err, started, generation));
  }

  /** The attempts after a first one failed with `err` (see withRetry). */
  private async retry<T>(
    attempt: (attemptNo: number) => Promise<T>,
    failed: unknown,
    started: number,
    generation: number,
  ): Promise<T> {
    const { maxAttempts, baseDelayMs, deadlineMs } = this.opts.retry;
    const deadline = started + deadlineMs;
    const sessionEnded = () => this.session.generation !== generation;
    let err = failed;
    for (let n = 1; ; n++) {
      // `err` is how attempt n failed.
      if (!isZoottError(err) || !err.retryable || n >= maxAttempts || Date.now() >= deadline)
        throw err;
      const backoff = Math.min(baseDelayMs * 2 ** (n - 1), 1000) * (0.5 + Math.random() / 2);
      await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
      await this.session.waitState(
        (s) => (s !== 'suspended' && s !== 'connecting') || sessionEnded(),
        deadline,
      );
      if (sessionEnded()) throw this.lostWhileWaiting(err);
      try {
        return await attempt(n + 1);
      } catch (next) {
        err = next;
      }
    }
  }

  /** The error of a call whose session ended while it waited to be retried after `err`. */
  private lostWhileWaiting(err: ZoottError): ZoottError {
    return new ZoottError(
      'SESSION_EXPIRED',
      `the session was lost while the call waited to be retried (after ${err.code}); call renewSession()`,
      { op: err.op, path: err.path },
    );
  }

  /**
   * Starts `run` at once but settles its promise only after every call issued before it in
   * the same session has settled: the contract's FIFO order, whatever number of internal
   * steps (retries, lookups) each call took.
   */
  ordered<T>(run: () => Promise<T>): Promise<T> {
    // The order holds within a session (a generation): a call of a new session never waits
    // behind one of an older one, which fails with its session anyway.
    const generation = this.session.generation;
    if (generation !== this.order.generation) this.order = new CallOrder(generation);
    return this.order.add(run());
  }

  /** `ordered` for a call already started (in this turn, so in the same session). */
  inOrder<T>(result: Promise<T>): Promise<T> {
    const generation = this.session.generation;
    if (generation !== this.order.generation) this.order = new CallOrder(generation);
    return this.order.add(result);
  }

  /** Fails every request still waiting (the session ended) and stops the sweeper. */
  rejectAll(code: ErrorCode, text: string): void {
    const pending = [...this.inFlight];
    this.inFlight.clear();
    for (const inFlight of pending) inFlight.reject(code, text);
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /**
   * One timer for the deadlines of all requests, instead of a timer per request (which cost
   * a noticeable share of a pipelined load). Every request has the same timeout, so the set
   * (insertion order) is ordered by deadline: a sweep stops at the first one still in time.
   */
  private armSweeper(): void {
    if (this.sweeper) return;
    const period = Math.max(5, Math.min(250, Math.floor(this.opts.requestTimeoutMs / 20)));
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const entry of this.inFlight) {
        if (entry.deadline > now) break;
        entry.reject(
          'OPERATION_TIMEOUT',
          `no reply within ${this.opts.requestTimeoutMs} ms; the outcome is unknown`,
        );
      }
      if (this.inFlight.size === 0 && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = null;
      }
    }, period);
    this.sweeper.unref();
  }
}

/** A call in a {@link CallOrder}: its outcome once known, and its caller's promise to settle. */
interface Slot {
  done: boolean;
  ok: boolean;
  value: unknown;
  /** Unset for a call that had none before it: its caller holds the call's own promise. */
  resolve: ((value: unknown) => void) | null;
  reject: ((err: unknown) => void) | null;
}

/**
 * The calls of one session generation in issue order, each settled for its caller only once
 * every call before it has settled. A call with none unsettled before it (most, when replies
 * come back in order) is handed its own promise: no promise chained per call.
 */
class CallOrder {
  private readonly slots: Slot[] = [];
  private head = 0;

  constructor(readonly generation: number) {}

  add<T>(result: Promise<T>): Promise<T> {
    const slot: Slot = { done: false, ok: false, value: undefined, resolve: null, reject: null };
    const first = this.head === this.slots.length;
    this.slots.push(slot);
    // Also handles a rejection, so one that waits its turn is not reported as unhandled.
    result.then(
      (value) => this.settle(slot, true, value),
      (err: unknown) => this.settle(slot, false, err),
    );
    if (first) return result;
    return new Promise<T>((resolve, reject) => {
      slot.resolve = resolve as (value: unknown) => void;
      slot.reject = reject;
    });
  }

  private settle(slot: Slot, ok: boolean, value: unknown): void {
    slot.done = true;
    slot.ok = ok;
    slot.value = value;
    const slots = this.slots;
    while (this.head < slots.length && slots[this.head]!.done) {
      const settled = slots[this.head++]!;
      if (settled.ok) settled.resolve?.(settled.value);
      else settled.reject?.(settled.value);
    }
    if (this.head === slots.length) {
      slots.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > slots.length) {
      slots.splice(0, this.head);
      this.head = 0;
    }
  }
}
