import type { Op } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf, multiFailure, UNKNOWN_OUTCOME_CODES } from '../engine/errors.js';
import { AREA, ENTRY_KIND, entryPrefix } from '../engine/layout.js';
import { connectionBack } from '../engine/session.js';
import type { EngineLogger, EntryData } from '../engine/types.js';
import { ensureWorldPath } from '../engine/world-nodes.js';
import type { Engine } from '../front/engine.js';
import { LeaderElection } from '../recipes/election/leader-election.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
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
  const s = new Scheduler(engine, options);
  return {
    get isLeader() {
      return s.leading;
    },
    stop: () => s.stop(),
    done: s.done,
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
      for (const k of known.values()) {
        if (signal.aborted) return;
        const next = await this.tickDue(ctx, k, signal);
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
    const c = ctx.coordinator;
    const dir = schedulesPath(ctx.layout.world);
    let names: string[] = [];
    try {
      names = await c.children(dir, { watch: onChange });
    } catch (err) {
      if (codeOf(err) !== 'NO_NODE') throw err;
      // No schedule was ever added: wake when the folder appears.
      if ((await c.exists(dir, { watch: onChange })) !== null) onChange();
    }
    known.clear();
    await Promise.all(
      names.map(async (name) => {
        const path = `${dir}/${name}`;
        try {
          const got = await c.get(path, { watch: onChange });
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
    k: Known,
    signal: AbortSignal,
  ): Promise<number | typeof STALE> {
    const now = ctx.clock.now();
    const ticks: number[] = [];
    let due: number | null;
    try {
      due = nextTick(k.stored, k.stored.lastTick ?? k.stored.createdAt);
    } catch (err) {
      this.warn({ schedule: k.stored.name, err: String(err) }, 'scheduler: bad cron skipped');
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
      due = nextTick(k.stored, due);
    }
    if (skipped > 0)
      this.warn({ schedule: k.stored.name, skipped }, 'scheduler: missed ticks skipped');
    for (const tick of ticks) {
      if (signal.aborted) return Number.POSITIVE_INFINITY;
      if (!(await this.queueTick(ctx, k, tick))) return STALE;
    }
    return due ?? Number.POSITIVE_INFINITY;
  }

  /**
   * One tick, one multi (see {@link runScheduler}). Returns `false` when the schedule changed
   * under us (removed, or advanced by another scheduler): the watch re-reads it.
   */
  private async queueTick(ctx: EngineContext, k: Known, tick: number): Promise<boolean> {
    const { coordinator: c, layout } = ctx;
    const path = `${schedulesPath(layout.world)}/${k.stored.name}`;
    const name = tickTaskName(k.stored.name, tick);
    const key = [name];
    const advanced: StoredSchedule = { ...k.stored, lastTick: tick };
    const entry: EntryData = {
      name,
      type: k.stored.type,
      attempts: 0,
      maxAttempts: ctx.defaults.maxAttempts,
      backoff: ctx.defaults.backoff,
      queuedAt: ctx.clock.now(),
    };
    if (k.stored.data !== undefined) entry.data = k.stored.data;
    const bucket = layout.bucketPath(AREA.pending, layout.bucketOf(key));
    const tickOps: Op[] = [
      {
        op: 'create',
        path: layout.treePath(key),
        data: encodeJson({ name, type: k.stored.type, data: k.stored.data ?? null }),
      },
      {
        op: 'create',
        path: `${bucket}/${entryPrefix(ENTRY_KIND.queued, 0, key.join(KEY_SEPARATOR))}`,
        data: encodeJson(entry),
        sequential: true,
      },
    ];
    const advance: Op = { op: 'set', path, data: encodeJson(advanced), version: k.version };
    for (let round = 0; round < 8; round++) {
      let queued = true;
      try {
        const res = await c.multi([advance, ...tickOps]);
        const r0 = res[0];
        k.version = r0 && 'stat' in r0 ? r0.stat.version : k.version + 1;
      } catch (err) {
        const f = multiFailure(err);
        if (f?.index === 0 && (f.code === 'BAD_VERSION' || f.code === 'NO_NODE')) return false;
        if (f?.index === 1 && f.code === 'NODE_EXISTS') {
          // The tick's task is there already: only move the schedule past it.
          queued = false;
          try {
            k.version = (await c.set(path, encodeJson(advanced), k.version)).version;
          } catch (e) {
            if (codeOf(e) === 'BAD_VERSION' || codeOf(e) === 'NO_NODE') return false;
            throw e;
          }
        } else if (UNKNOWN_OUTCOME_CODES.has(codeOf(err) ?? '')) {
          // Reply lost: the schedule node says whether the tick went in.
          if (!(await connectionBack(c))) throw err;
          const got = await c.get(path).catch(() => null);
          if (!got) return false;
          if (got.stat.version === k.version) continue;
          const now = decodeJson<StoredSchedule>(got.data, path);
          if ((now.lastTick ?? -1) < tick) return false;
          k.version = got.stat.version;
        } else if (f?.index === 2 && f.code === 'NO_NODE') {
          throw new ZoottError(
            'WORLD_NOT_INITIALISED',
            `world ${layout.world} has no pending area; call init`,
            { path: bucket },
          );
        } else throw err;
      }
      k.stored = advanced;
      this.opts.onTick?.({ schedule: k.stored.name, tick, task: name, queued });
      return true;
    }
    return false;
  }
}
