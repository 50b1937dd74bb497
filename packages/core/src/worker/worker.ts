import type { Claimer, ClaimerOptions } from '../claim/claimer.js';
import type { Coordinator, SessionEvent } from '../contract/coordinator.js';
import { isZoottError, ZoottError } from '../contract/errors.js';
import { Alarm } from '../engine/alarm.js';
import { codeOf } from '../engine/errors.js';
import { PauseWatch, typePaused } from '../engine/pause.js';
import { renewUntilOpen } from '../engine/session.js';
import type { Claim, EngineClock, EngineLogger } from '../engine/types.js';
import { createEngine, type Engine } from '../front/engine.js';
import { RateLimits } from '../rate-limits/rate-gate.js';
import type { Reaper } from '../retention/reaper.js';
import { runScheduler } from '../schedules/scheduler.js';
import { KEY_SEPARATOR, worldRoot } from '../tree/keys.js';
import type { AnyTasks, TaskMap } from '../tree/task-map.js';
import { CancelWatcher, DEFAULT_CANCEL_WATCH_AFTER_MS } from './cancel-watch.js';
import { IdleStealer } from './idle-steal.js';
import { PriorityCounts } from './priority-counts.js';
import { countOutcome, runTraced, type Written, writeOutcome } from './run-outcome.js';
import {
  type HandlerEnd,
  LazyAbort,
  type RunPlace,
  type RunState,
  runHandler,
} from './task-context.js';
import {
  reportCancelled,
  reportOutcome,
  type WorkerEventMap,
  WorkerEvents,
  type WorkerStats,
} from './worker-events.js';
import { checkDatasets, WorkerMembership } from './worker-membership.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_POLL_MS,
  DEFAULT_STEAL_AFTER_MS,
  DEFAULT_STOP_TIMEOUT_MS,
  type Handlers,
  type WorkerHandle,
  type WorkerOptions,
} from './worker-types.js';

export type { WorkerStats } from './worker-events.js';
export type {
  Handlers,
  TaskContext,
  TaskHandler,
  WorkerHandle,
  WorkerOptions,
} from './worker-types.js';

type Running = RunState;

/**
 * A worker loop: registers in the world's registry, owns buckets by rendezvous hashing,
 * claims runnable tasks whose type it handles, runs them with up to `concurrency` at once,
 * and records results. Stops claiming while the connection is `suspended`, aborts handlers
 * when the session is `lost`, and re-registers on the next session. Handlers are typed by
 * the task map of `options.engine`, or by an explicit `runWorker<MyTasks>(...)`.
 */
export function runWorker<M extends TaskMap<M> = AnyTasks>(
  coordinator: Coordinator,
  handlers: NoInfer<Handlers<M>>,
  options: WorkerOptions<M>,
): WorkerHandle<M> {
  // The loop runs any task type as stored; the map only types what the caller sees.
  const loop = new WorkerLoop(
    coordinator,
    handlers as unknown as Handlers,
    options as unknown as WorkerOptions,
  );
  return loop.handle() as unknown as WorkerHandle<M>;
}

class WorkerLoop {
  private readonly engine: Engine;
  private readonly id: string;
  private readonly types: string[];
  private readonly concurrency: number;
  private readonly lowWater: number;
  /** How many running tasks have each priority: work above the lowest skips the batching. */
  private readonly runningPriorities = new PriorityCounts();
  private readonly logger: EngineLogger | undefined;
  /** The engine's clock, or the one given to the worker: its only source of time and chance. */
  private readonly clock: EngineClock;
  private readonly membership: WorkerMembership;
  /** The world's rate limits; this worker's shares follow the registry. */
  private readonly limits: RateLimits;
  private claimer: Claimer | null = null;
  /** The world's reaper (acts only while this worker is the elected one). */
  private reaper: Reaper | null = null;
  private readonly running = new Map<string, Running>();
  private stopping = false;
  private paused = false;
  /** The loop's sleep, cut short by every watch, completion and signal. */
  private readonly alarm: Alarm;
  private stealer: IdleStealer | null = null;
  private idleSince: number;
  readonly stats: WorkerStats = { claimed: 0, completed: 0, retried: 0, failed: 0, dropped: 0 };
  private readonly unsubscribe: () => void;
  private readonly done: Promise<void>;
  private stopPromise: Promise<void> | null = null;
  /** Aborted when the worker stops: ends the waits between session renewals. */
  private readonly halt = new AbortController();
  private renewing = false;
  /** Set when a task starts, cleared when `drained` is emitted; set at first (an empty world drains too). */
  private ranSinceDrained = true;
  readonly events: WorkerEvents<WorkerEventMap>;
  /** Where every handler runs: this worker's id, cancel watcher and engine context. */
  private readonly place: RunPlace;
  /** The world's pause state as this worker last saw it (a watch keeps it current). */
  private readonly pause: PauseWatch;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly handlers: Handlers,
    private readonly opts: WorkerOptions,
  ) {
    this.types = Object.keys(handlers);
    if (this.types.length === 0)
      throw new ZoottError('INVALID_CONFIG', 'handlers: give at least one task type', {
        field: 'handlers',
      });
    for (const type of this.types)
      if (typeof handlers[type] !== 'function')
        throw new ZoottError('INVALID_CONFIG', `handlers.${type}: must be a function`, {
          field: `handlers.${type}`,
        });
    const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new ZoottError(
        'INVALID_CONFIG',
        `concurrency ${concurrency}: must be an integer >= 1`,
        {
          field: 'concurrency',
        },
      );
    this.concurrency = concurrency;
    this.lowWater = Math.max(1, Math.floor(concurrency / 4));
    this.engine =
      opts.engine ??
      createEngine(coordinator, {
        ...(opts.engineOptions ?? {}),
        world: opts.world,
        ...(opts.clock ? { clock: opts.clock } : {}),
        ...(opts.logger ? { logger: opts.logger } : {}),
      });
    this.logger = opts.logger;
    this.clock = opts.clock ?? this.engine.clock;
    this.alarm = new Alarm(this.clock);
    this.id =
      opts.id ??
      `w-${Math.floor(this.clock.random() * 0xffffffff)
        .toString(16)
        .padStart(8, '0')}`;
    const afterMs = opts.cancelWatchAfterMs ?? DEFAULT_CANCEL_WATCH_AFTER_MS;
    this.place = {
      worker: this.id,
      cancels: new CancelWatcher(coordinator, this.clock, afterMs),
      context: () => this.engine.context(),
      contextNow: () => this.engine.contextNow(),
    };
    this.idleSince = this.now();
    this.events = new WorkerEvents<WorkerEventMap>((event, err) =>
      this.log('warn', { event, err: String(err) }, 'worker event listener threw'),
    );
    const datasets = checkDatasets(opts.datasets ?? []);
    const identity = { id: this.id, types: this.types, startedAt: this.idleSince };
    this.membership = new WorkerMembership(
      coordinator,
      this.engine,
      {
        ...identity,
        ...(opts.host !== undefined ? { host: opts.host } : {}),
        ...(opts.pid !== undefined ? { pid: opts.pid } : {}),
        ...(opts.server !== undefined ? { server: opts.server } : {}),
        ...(opts.hasFile ? { files: true } : {}),
        ...(datasets.length > 0 ? { datasets } : {}),
      },
      () => this.wake(),
      (fields, msg) => this.log('warn', fields, msg),
    );
    this.pause = new PauseWatch(coordinator, worldRoot(this.engine.world), () => this.wake());
    this.limits = new RateLimits(
      coordinator,
      this.engine.world,
      (type) => this.membership.serving(type),
      () => this.wake(),
    );
    this.unsubscribe = coordinator.onSession((e) => this.onSession(e));
    opts.signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.done = this.main()
      .catch((err: unknown) => {
        this.events.emit('error', { error: err, message: `worker stopped: ${String(err)}` });
        throw err;
      })
      .finally(() => this.unsubscribe());
  }

  handle(): WorkerHandle {
    const self = this;
    return {
      id: this.id,
      get registryPath() {
        return self.membership.registryPath;
      },
      get buckets() {
        return self.membership.owned;
      },
      get paused() {
        return self.pause.state;
      },
      stats: this.stats,
      rateLimit: (type) => this.limits.view(type, this.clock.now()),
      stop: () => this.stop(),
      done: this.done,
      on: (event, listener) => this.events.on(event, listener),
      once: (event, listener) => this.events.on(event, listener, true),
      off: (event, listener) => this.events.off(event, listener),
    };
  }

  private now(): number {
    return this.clock.now();
  }

  private sleep(ms: number): Promise<void> {
    return this.alarm.sleep(ms);
  }

  private wake(): void {
    this.alarm.wake();
  }

  private log(level: 'warn' | 'info', fields: object, msg: string): void {
    const logger = this.logger;
    if (!logger) return;
    if (level === 'warn') logger.warn(fields, msg);
    else logger.info?.(fields, msg);
  }

  private onSession(event: SessionEvent): void {
    switch (event.type) {
      case 'suspended':
        this.paused = true;
        break;
      case 'reconnected':
        this.paused = false;
        this.wake();
        break;
      case 'lost':
        this.paused = true;
        this.membership.sessionLost();
        for (const runState of this.running.values()) {
          runState.void = true;
          runState.abort.abort(
            new ZoottError('SESSION_EXPIRED', 'session lost: the claim is gone'),
          );
        }
        this.claimer?.invalidate();
        if (this.opts.renewSession !== false && !this.stopping) void this.renew();
        this.wake();
        break;
      case 'connected':
        if (this.membership.isNewSession(event.sessionId)) {
          this.paused = false;
          this.membership.markChanged();
          this.limits.dirty = true;
          this.claimer?.invalidate();
          this.wake();
        }
        break;
      case 'closed':
        this.stopping = true;
        this.halt.abort();
        this.wake();
        break;
    }
  }

  /** Opens a new session after `lost` (see {@link renewUntilOpen}); one renewal at a time. */
  private async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      await renewUntilOpen(this.coordinator, this.clock, this.halt.signal, (fields, msg) =>
        this.log('warn', fields, msg),
      );
    } finally {
      this.renewing = false;
    }
  }

  /** Re-reads the registry; the claimer watches the buckets this worker owns now. */
  private async rebalance(): Promise<void> {
    const owned = await this.membership.rebalance((buckets) => this.claimer?.setWatched(buckets));
    if (owned) this.log('info', { worker: this.id, buckets: owned.length }, 'buckets rebalanced');
  }

  /** What this worker's claimer knows of it: identity, types, locality, gate, slots. */
  private claimerOptions(pause: PauseWatch): ClaimerOptions {
    return {
      paused: (type) => typePaused(pause.state, type),
      worker: this.id,
      types: this.types,
      ...(this.opts.server !== undefined ? { server: this.opts.server } : {}),
      ...(this.opts.host !== undefined ? { host: this.opts.host } : {}),
      ...(this.opts.pid !== undefined ? { pid: this.opts.pid } : {}),
      ...(this.opts.locality ? { locality: this.opts.locality } : {}),
      ...(this.opts.hasFile ? { hasFile: this.opts.hasFile } : {}),
      ...(this.opts.datasets ? { datasets: this.opts.datasets } : {}),
      ...(this.opts.localityWaitMs !== undefined
        ? { localityWaitMs: this.opts.localityWaitMs }
        : {}),
      ...(this.opts.lookahead !== undefined ? { lookahead: this.opts.lookahead } : {}),
      peers: () => this.membership.peers(),
      onForeignChange: (bucket) => {
        this.stealer?.changed(bucket);
        this.wake();
      },
      scoutWatch: (bucket) => this.membership.watches(bucket),
      gate: this.limits,
      spareSlots: () => this.concurrency - this.running.size,
      entryEvents: this.opts.entryEvents ?? 'small',
    };
  }

  private async main(): Promise<void> {
    const ctx = await this.engine.context();
    const pause = this.pause;
    await pause.read();
    this.claimer = await this.engine.claimer(this.claimerOptions(pause), () => this.wake());
    // Every worker is a scheduler candidate; the one elected queues the world's cron ticks.
    const scheduler =
      this.opts.scheduler === false
        ? null
        : runScheduler(this.engine, {
            identifier: this.id,
            ...(this.logger ? { logger: this.logger } : {}),
          });
    if (this.opts.retention !== false) {
      this.reaper = this.membership.reaper(ctx, this.opts.retention);
      this.reaper.start();
    }
    const all = Array.from({ length: ctx.layout.buckets }, (_, i) => i);
    const stealAfter = this.opts.stealAfterMs ?? DEFAULT_STEAL_AFTER_MS;
    const pollMs = this.opts.pollMs ?? DEFAULT_POLL_MS;
    const stealer = new IdleStealer(this.claimer, this.clock, stealAfter, (bucket) =>
      this.membership.watches(bucket),
    );
    this.stealer = stealer;
    while (!this.stopping) {
      this.alarm.rearm();
      try {
        if (this.coordinator.state === 'closed') break;
        if (this.paused || this.coordinator.state !== 'connected') {
          await this.sleep(pollMs);
          if (this.coordinator.state === 'connected') this.paused = false;
          continue;
        }
        if (this.membership.needsRegistration()) await this.membership.register();
        if (this.membership.dirty) await this.rebalance();
        if (this.limits.dirty) await this.limits.refresh();
        const free = this.concurrency - this.running.size;
        // Claim in batches: with work running, wait until a quarter of the slots are free,
        // so one claim round trip fills several slots instead of one each. Unless a task this
        // worker completed has a child waiting, or work of a higher priority than some task
        // running here is waiting: that goes first, into the slot free now.
        const batching = this.running.size > 0 && free < this.lowWater;
        const low = this.runningPriorities.lowest();
        if (free <= 0 || (batching && !this.claimer.hasUrgent(this.membership.owned, low))) {
          await this.sleep(pollMs);
          continue;
        }
        let claims = await this.claimer.claimBatch(this.membership.owned, free);
        // Read now: a steal pass's claim calls overwrite it.
        const ownWakeAt = this.claimer.wakeAt;
        const now = this.now();
        // Once a pass finds work, pass again as soon as slots free up: for a task type only
        // this worker handles, other buckets may be the only place its work ever shows up.
        const idle = stealer.stealing || now - this.idleSince >= stealAfter;
        const others = stealer.othersThan(all, this.membership.owned);
        if (claims.length === 0 && idle && !this.stopping)
          claims = await stealer.pass(others, free);
        if (claims.length > 0) {
          if (this.stopping) {
            await Promise.all(claims.map((claim) => this.engine.release(claim)));
            break;
          }
          for (const claim of claims) this.start(claim);
          this.idleSince = this.now();
          continue;
        }
        if (this.ranSinceDrained && this.running.size === 0) {
          this.ranSinceDrained = false;
          this.events.emit('drained', { stats: { ...this.stats } });
        }
        // Idle, this worker wakes for its own buckets' watches, an entry's time, the poll, and
        // a steal pass that is due: never on a fixed beat over other buckets.
        const stealAt = Math.max(this.idleSince + stealAfter, stealer.wakeAt(others));
        const wakeAt = Math.min(ownWakeAt, now + pollMs, stealAt);
        await this.sleep(Math.max(1, wakeAt - now));
      } catch (err) {
        if (this.stopping) break;
        const code = codeOf(err);
        if (
          !isZoottError(err) ||
          (code !== 'CONNECTION_LOSS' &&
            code !== 'SESSION_EXPIRED' &&
            code !== 'OPERATION_TIMEOUT' &&
            code !== 'CLOSED')
        ) {
          this.log('warn', { err: String(err) }, 'worker loop error');
          this.events.emit('error', { error: err, message: `worker loop error: ${String(err)}` });
        }
        this.claimer.invalidate();
        await this.sleep(Math.min(pollMs, 100));
      }
    }
    this.claimer.close();
    pause.close();
    await scheduler?.stop();
    await Promise.all([this.drain(), this.reaper?.stop()]);
    await this.membership.unregister();
  }

  private start(claim: Claim): void {
    const key = claim.key.join(KEY_SEPARATOR);
    const runState: Running = {
      claim,
      abort: new LazyAbort(),
      void: false,
      release: false,
      cancelled: false,
    };
    this.running.set(key, runState);
    const { priority } = claim;
    this.runningPriorities.add(priority);
    this.stats.claimed++;
    this.ranSinceDrained = true;
    void this.execute(runState, key, priority);
  }

  /**
   * Runs a claim and records its outcome, then frees its slot: for a child claimed with the
   * completion, by starting it there. One async layer per task from the handler's call to
   * the slot's release (each layer was a promise, a turn and its closures per task).
   */
  private async execute(runState: Running, key: string, priority: number): Promise<void> {
    let next: Claim | null = null;
    try {
      const { claim } = runState;
      const place = this.place;
      const ctx = place.contextNow() ?? (await place.context());
      const handler = this.handlers[claim.type]!;
      let end: HandlerEnd;
      let written: Written;
      if (ctx.telemetry) {
        ({ end, written } = await runTraced(
          handler,
          runState,
          place,
          ctx,
          ctx.telemetry,
          this.write,
        ));
      } else {
        end = await runHandler(handler, runState, place, ctx);
        written = await this.write(runState, end);
      }
      const { outcome, recordError } = written;
      if (runState.cancelled && outcome.status === 'dropped') reportCancelled(this.events, claim);
      else reportOutcome(this.events, claim, outcome, end.value, runState.release, recordError);
      countOutcome(this.stats, outcome, runState.release);
      next = written.next;
    } finally {
      this.running.delete(key);
      this.runningPriorities.remove(priority);
      // A child claimed in the completion's multi takes the slot the task leaves.
      if (next && this.stopping) void this.engine.release(next);
      else if (next) this.start(next);
      this.wake();
    }
  }

  /** Writes the end of a run (see `writeOutcome`); one function for every task of the worker. */
  private readonly write = (runState: RunState, end: HandlerEnd): Promise<Written> =>
    writeOutcome(this.engine, this.coordinator, runState, end, this.handingOff(), this.warn);

  private readonly warn = (fields: object, msg: string): void => this.log('warn', fields, msg);

  /** The claimer a completion may hand a child to: none while this worker claims nothing. */
  private handingOff(): Claimer | undefined {
    if (this.stopping || this.paused || this.coordinator.state !== 'connected') return undefined;
    return this.claimer ?? undefined;
  }

  /** Waits for running handlers; after `stopTimeoutMs` aborts them and gives their claims back. */
  private async drain(): Promise<void> {
    if (this.running.size === 0) return;
    const timeout = this.opts.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    const deadline = this.now() + timeout;
    while (this.running.size > 0) {
      const left = deadline - this.now();
      if (left <= 0) {
        for (const runState of this.running.values()) {
          runState.release = true;
          runState.abort.abort(new ZoottError('ABORTED', 'worker stopping'));
        }
        // Re-armed each round: a completion's wake-up must not turn the wait into a spin
        // on settled promises, which would starve the I/O the other completions wait for.
        while (this.running.size > 0) {
          this.alarm.rearm();
          await this.sleep(50);
        }
        return;
      }
      this.alarm.rearm();
      await this.sleep(Math.min(left, 50));
    }
  }

  stop(): Promise<void> {
    if (!this.stopPromise) {
      this.stopping = true;
      this.halt.abort();
      this.wake();
      this.stopPromise = this.done.catch(() => undefined);
    }
    return this.stopPromise;
  }
}
