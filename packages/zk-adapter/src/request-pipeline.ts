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
  /** Settles after the last issued call has settled; see ordered(). */
  private tail: Promise<void> = Promise.resolve();
  /** The session generation (ZkSession.generation) the calls chained on `tail` belong to. */
  private tailGeneration = -1;

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
    const details = { op, path };
    if (this.session.state === 'closed') {
      return Promise.reject(new ZoottError('CLOSED', undefined, details));
    }
    const client = this.session.client;
    if (this.session.state === 'lost' || !client) {
      return Promise.reject(
        new ZoottError('SESSION_EXPIRED', 'the session is lost; call renewSession()', details),
      );
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const entry: InFlight = {
        deadline: Date.now() + this.opts.requestTimeoutMs,
        reject: (code, text) => settle(new ZoottError(code, text, details)),
      };
      const settle = (err: ZoottError | null, value?: T) => {
        if (settled) return;
        settled = true;
        this.inFlight.delete(entry);
        if (err) reject(err);
        else resolve(value as T);
      };
      this.inFlight.add(entry);
      this.armSweeper();
      try {
        start(client, (err, value) => {
          if (err) settle(this.explain(toZoottError(err, details)));
          else settle(null, value);
        });
      } catch (err) {
        // The library validates some arguments with synchronous assertions.
        settle(toZoottError(err, details));
      }
    });
  }

  /**
   * Runs `attempt` and, for retryable failures (connection loss, no reply in time) under the
   * `retry` policy, again after a backoff and once connected, until maxAttempts or deadlineMs.
   */
  async withRetry<T>(policy: RetryPolicy, attempt: (n: number) => Promise<T>): Promise<T> {
    const { maxAttempts, baseDelayMs, deadlineMs } = this.opts.retry;
    const deadline = Date.now() + deadlineMs;
    // A call is retried within its own session only: once that is lost, the call cannot
    // succeed (what it read or wrote belonged to the session), and it fails at once rather
    // than wait for a renewal to carry it into another session.
    const generation = this.session.generation;
    const sessionEnded = () => this.session.generation !== generation;
    for (let n = 1; ; n++) {
      try {
        return await attempt(n);
      } catch (err) {
        const retryable = isZoottError(err) && err.retryable;
        if (policy === 'once' || !retryable || n >= maxAttempts || Date.now() >= deadline) {
          throw err;
        }
        const backoff = Math.min(baseDelayMs * 2 ** (n - 1), 1000) * (0.5 + Math.random() / 2);
        await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
        await this.session.waitState(
          (s) => (s !== 'suspended' && s !== 'connecting') || sessionEnded(),
          deadline,
        );
        if (sessionEnded()) throw this.lostWhileWaiting(err);
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
    if (generation !== this.tailGeneration) {
      this.tail = Promise.resolve();
      this.tailGeneration = generation;
    }
    const result = run();
    // Handled here so an early rejection is not reported as unhandled while it waits its turn.
    result.catch(() => {});
    const inOrder = this.tail.then(() => result);
    this.tail = inOrder.then(
      () => {},
      () => {},
    );
    return inOrder;
  }

  /** Fails every request still waiting (the session ended) and stops the sweeper. */
  rejectAll(code: ErrorCode, text: string): void {
    const pending = [...this.inFlight];
    this.inFlight.clear();
    for (const p of pending) p.reject(code, text);
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
