import type { Op } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf, multiFailure, UNKNOWN_OUTCOME_CODES } from '../engine/errors.js';
import { AREA } from '../engine/layout.js';
import { prepareQueue, resolveQueueOptions } from '../engine/queue.js';
import { connectionBack } from '../engine/session.js';
import type { EngineLogger } from '../engine/types.js';
import { ensureWorldPath } from '../engine/world-nodes.js';
import type { Engine } from '../front/engine.js';
import { LeaderElection } from '../recipes/election/leader-election.js';
import type { TaskInfo } from '../tree/task-map.js';
import { nextTick, type StoredSchedule, tickTaskName } from './schedule-spec.js';
import { readStoredSchedule, schedulerElectionPath, schedulesPath } from './schedule-store.js';

/** One tick the scheduler dealt with: queued now, or found already queued. */
export interface TickEvent {
  schedule: string;
  /** Tick time, ms since the epoch. */
  tick: number;
  /** Name of the tick's task. */
  task: string;
  /** `false` when the task was already there (queued by a scheduler before this one). */
  queued: boolean;
}

/** Options of {@link runScheduler}. */
export interface SchedulerOptions {
  /** Who this candidate is in the election (shown as the scheduler). */
  identifier?: string;
  /** Longest sleep between two looks at the schedules. Default 60 000 ms. */
  pollMs?: number;
  /** Missed ticks queued per schedule when a scheduler takes over late; older ones are skipped. Default 100. */
  maxCatchUp?: number;
  /** Told about every tick. */
  onTick?: (event: TickEvent) => void;
  logger?: EngineLogger;
}

/** A running scheduler candidate. */
export interface SchedulerHandle {
  /** Whether this candidate is the world's scheduler now. */
  readonly isLeader: boolean;
  /** Leaves the election and stops ticking. */
  stop(): Promise<void>;
  /** Settles when stopped; rejects when the world cannot be read at all. */
  readonly done: Promise<void>;
}

interface Known {
  stored: StoredSchedule;
  version: number;
}

const RETRY_BASE_MS = 100;
/** A schedule changed under the scheduler: its view must be read again before the next tick. */
const STALE = Symbol('stale');
const RETRY_MAX_MS = 5000;

/**
 * Runs a scheduler candidate for the engine's world: the candidates (every worker) elect
 * one leader with {@link LeaderElection}; the leader queues a task at every due tick of every
 * schedule. Each tick is ONE multi: `set schedule @version` (its `lastTick` moves to the tick)
 * + the task's tree node + its pending entry. So a tick is queued at most once even with two
 * leaders for a moment (the second fails its version check), and a scheduler that dies
 * mid-tick leaves either the whole tick or nothing; the next leader queues from `lastTick`
 * on. The task name is the schedule's name and the tick time, so a tick whose task exists
 * already (a schedule removed and added again, say) is not queued twice either.
 */
export function runScheduler(engine: Engine, options: SchedulerOptions = {}): SchedulerHandle {
  const scheduler = new Scheduler(engine, options);
  return {
    get isLeader() {
      return scheduler.leading;
    },
    stop: () => scheduler.stop(),
    done: scheduler.done,
  };
}

class Scheduler {
  leading = false;
  readonly done: Promise<void>;
  private readonly halt = new AbortController();

  constructor(
    private readonly engine: Engine,
    private readonly opts: SchedulerOptions,
  ) {
    this.done = this.main();
    // Handled here too, so a scheduler whose world cannot be read never becomes an
    // unhandled rejection; `done` still rejects for whoever awaits it.
    this.done.catch((err: unknown) =>
      this.warn({ err: String(err) }, 'scheduler stopped: the world cannot be read'),
    );
  }

  async stop(): Promise<void> {
    this.halt.abort();
    await this.done.catch(() => undefined);
  }

  private warn(fields: object, msg: string): void {
    this.opts.logger?.warn(fields, msg);
  }

  private async main(): Promise<void> {
    const ctx = await this.engine.context();
    const election = new LeaderElection(
      ctx.coordinator,
      schedulerElectionPath(ctx.layout.world),
      this.opts.identifier !== undefined ? { identifier: this.opts.identifier } : {},
    );
    let delay = RETRY_BASE_MS;
    try {
      while (!this.halt.signal.aborted) {
        try {
          // `init` made it; for a world made by zoott 0.1.0 it is made here as `init` would
          // (the election itself would make the shared `/zoott_leaders` with this session's
          // ACL, locking every other world out of it).
          await ensureWorldPath(ctx.coordinator, schedulerElectionPath(ctx.layout.world));
          const leadership = await election.lead({ signal: this.halt.signal });
          this.leading = true;
          this.opts.logger?.info?.({ world: ctx.layout.world }, 'scheduler elected');
          await this.lead(ctx, AbortSignal.any([leadership.signal, this.halt.signal]));
          delay = RETRY_BASE_MS;
        } catch (err) {
          if (this.halt.signal.aborted) break;
          // No session (being renewed by the worker), a lost connection, a failed write: give
          // the leadership to someone healthy and try again after a pause.
          this.warn({ err: String(err), retryInMs: delay }, 'scheduler: leading failed');
          await election.withdraw().catch(() => undefined);
          await ctx.clock.sleep(delay, this.halt.signal);
          delay = Math.min(delay * 2, RETRY_MAX_MS);
        } finally {
          this.leading = false;
        }
      }
    } finally {
      await election.close().catch(() => undefined);
    }
  }

  /** The leader's loop: queue due ticks, sleep until the next one or a schedule change. */
  private async lead(ctx: EngineContext, signal: AbortSignal): Promise<void> {
    const known = new Map<string, Known>();
    let dirty = true;
    let changed = new AbortController();
    const pollMs = this.opts.pollMs ?? 60_000;
    while (!signal.aborted) {
      if (dirty) {
        changed = new AbortController();
        const wake = changed;
        dirty = false;
        await this.read(ctx, known, () => {
          dirty = true;
          wake.abort();
        });
      }
      let wakeAt = Number.POSITIVE_INFINITY;
      for (const entry of known.values()) {
        if (signal.aborted) return;
        const next = await this.tickDue(ctx, entry, signal);
        // Changed under us (another scheduler's write, a removal): read it again first.
        if (next === STALE) dirty = true;
        else wakeAt = Math.min(wakeAt, next);
      }
      if (dirty) continue;
      const wait = Math.max(1, Math.min(wakeAt - ctx.clock.now(), pollMs));
      await ctx.clock.sleep(wait, AbortSignal.any([signal, changed.signal]));
    }
  }

  /** Re-reads every schedule, arming watches that call `onChange` (a child or data change). */
  private async read(ctx: EngineContext, known: Map<string, Known>, onChange: () => void) {
    const coordinator = ctx.coordinator;
    const dir = schedulesPath(ctx.layout.world);
    let names: string[] = [];
    try {
      names = await coordinator.children(dir, { watch: onChange });
    } catch (err) {
      if (codeOf(err) !== 'NO_NODE') throw err;
      // No schedule was ever added: wake when the folder appears.
      if ((await coordinator.exists(dir, { watch: onChange })) !== null) onChange();
    }
    known.clear();
    await Promise.all(
      names.map(async (name) => {
        const path = `${dir}/${name}`;
        try {
          const got = await coordinator.get(path, { watch: onChange });
          const stored = readStoredSchedule(got.data);
          if (typeof stored === 'string') {
            this.warn({ path, reason: stored }, 'scheduler: unreadable schedule skipped');
            return;
          }
          known.set(name, { stored, version: got.stat.version });
        } catch (err) {
          if (codeOf(err) !== 'NO_NODE') throw err;
        }
      }),
    );
  }

  /** Queues the due ticks of one schedule; returns the time of its next tick, or STALE. */
  private async tickDue(
    ctx: EngineContext,
    schedule: Known,
    signal: AbortSignal,
  ): Promise<number | typeof STALE> {
    const now = ctx.clock.now();
    const ticks: number[] = [];
    let due: number | null;
    try {
      due = nextTick(schedule.stored, schedule.stored.lastTick ?? schedule.stored.createdAt);
    } catch (err) {
      this.warn(
        { schedule: schedule.stored.name, err: String(err) },
        'scheduler: bad cron skipped',
      );
      return Number.POSITIVE_INFINITY;
    }
    const maxCatchUp = this.opts.maxCatchUp ?? 100;
    let skipped = 0;
    while (due !== null && due <= now) {
      ticks.push(due);
      if (ticks.length > maxCatchUp) {
        ticks.shift();
        skipped++;
      }
      due = nextTick(schedule.stored, due);
    }
    if (skipped > 0)
      this.warn({ schedule: schedule.stored.name, skipped }, 'scheduler: missed ticks skipped');
    for (const tick of ticks) {
      if (signal.aborted) return Number.POSITIVE_INFINITY;
      if (!(await this.queueTick(ctx, schedule, tick))) return STALE;
    }
    return due ?? Number.POSITIVE_INFINITY;
  }

  /**
   * One tick, one multi (see {@link runScheduler}). Returns `false` when the schedule changed
   * under us (removed, or advanced by another scheduler): the watch re-reads it.
   */
  private async queueTick(ctx: EngineContext, schedule: Known, tick: number): Promise<boolean> {
    const { coordinator, layout } = ctx;
    const path = `${schedulesPath(layout.world)}/${schedule.stored.name}`;
    const name = tickTaskName(schedule.stored.name, tick);
    const key = [name];
    const advanced: StoredSchedule = { ...schedule.stored, lastTick: tick };
    // The tick's task is written as `queue` writes a new root task (its tree node and its
    // pending entry, with the engine's default options), beside the schedule's advance.
    const info: TaskInfo = { name, type: schedule.stored.type };
    if (schedule.stored.data !== undefined) info.data = schedule.stored.data;
    const tickOps = prepareQueue(ctx, key, info, resolveQueueOptions(ctx, {})).ops;
    const advance: Op = { op: 'set', path, data: encodeJson(advanced), version: schedule.version };
    for (let round = 0; round < 8; round++) {
      let queued = true;
      try {
        const res = await coordinator.multi([advance, ...tickOps]);
        const r0 = res[0];
        schedule.version = r0 && 'stat' in r0 ? r0.stat.version : schedule.version + 1;
      } catch (err) {
        const failure = multiFailure(err);
        if (failure?.index === 0 && (failure.code === 'BAD_VERSION' || failure.code === 'NO_NODE'))
          return false;
        if (failure?.index === 1 && failure.code === 'NODE_EXISTS') {
          // The tick's task is there already: only move the schedule past it.
          queued = false;
          try {
            schedule.version = (
              await coordinator.set(path, encodeJson(advanced), schedule.version)
            ).version;
          } catch (setError) {
            if (codeOf(setError) === 'BAD_VERSION' || codeOf(setError) === 'NO_NODE') return false;
            throw setError;
          }
        } else if (UNKNOWN_OUTCOME_CODES.has(codeOf(err) ?? '')) {
          // Reply lost: the schedule node says whether the tick went in.
          if (!(await connectionBack(coordinator))) throw err;
          const got = await coordinator.get(path).catch(() => null);
          if (!got) return false;
          if (got.stat.version === schedule.version) continue;
          const now = decodeJson<StoredSchedule>(got.data, path);
          if ((now.lastTick ?? -1) < tick) return false;
          schedule.version = got.stat.version;
        } else if (failure?.index === 2 && failure.code === 'NO_NODE') {
          throw new ZoottError(
            'WORLD_NOT_INITIALISED',
            `world ${layout.world} has no pending area; call init`,
            { path: layout.bucketPath(AREA.pending, layout.bucketOf(key)) },
          );
        } else throw err;
      }
      schedule.stored = advanced;
      this.opts.onTick?.({ schedule: schedule.stored.name, tick, task: name, queued });
      return true;
    }
    return false;
  }
}
