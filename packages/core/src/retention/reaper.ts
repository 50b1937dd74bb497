import { Alarm } from '../engine/alarm.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import { AREA } from '../engine/layout.js';
import { RegistryView } from '../engine/registry.js';
import { DirIndex } from './dir-index.js';
import { emptyRemoveReport, type RemoveReport, removeCompleted } from './remove.js';
import { type RetentionSettings, readRetention } from './settings.js';

/**
 * More retention work that the world's reaper does on each pass (the worker daemon removes
 * unconsumed reply results this way). Runs only in the elected reaper.
 */
export interface RetentionTask {
  readonly name: string;
  /** One pass under `settings`: removes at most `budget` nodes; how many it removed. */
  pass(settings: RetentionSettings, now: number, budget: number): Promise<number>;
  /** Leadership lost: forget what was indexed. */
  reset?(): void;
}

/** What one reaper pass did. */
export interface ReapReport extends RemoveReport {
  /** Whether this worker was the world's reaper for the pass (else nothing was done). */
  leader: boolean;
  /** Nodes removed by the extra tasks, by task name. */
  extra: Record<string, number>;
  /** Completed records indexed after the pass. */
  completedKept: number;
  /** Failed records counted. */
  failed: number;
  /** More removals are due: the next pass comes sooner. */
  backlog: boolean;
}

/** Options of the reaper a worker runs (`WorkerOptions.retention`). */
export interface ReaperOptions {
  /** Pause between passes while nothing is due (default 5 s). */
  intervalMs?: number;
  /** Pause after a pass that removed something (default 500 ms). */
  busyIntervalMs?: number;
  /** Most records removed per pass (default 10,000). */
  budget?: number;
  /** More work of the elected reaper. */
  tasks?: readonly RetentionTask[];
  /** Told after every pass (tests and metrics). */
  onPass?: (report: ReapReport) => void;
}

/** Errors of a pass that the worker loop already handles and reports. */
const QUIET_CODES = new Set(['CONNECTION_LOSS', 'SESSION_EXPIRED', 'OPERATION_TIMEOUT', 'CLOSED']);

/**
 * The sequence number of a registry node: the server's 10 digits at the end (an adapter
 * may put a marker before them, which must not decide the order).
 */
function seq(name: string): number {
  return Number(name.slice(-10));
}

/**
 * The world's reaper: removes what the world's retention settings let go. Every worker runs
 * one, and exactly one acts: the worker whose registry node is the oldest live registration
 * (the lowest sequence number among the ephemeral `worker-` nodes; the usual ZooKeeper
 * leader recipe, on the registry the workers keep anyway). Records are never written by two
 * reapers, and a quiet world costs no request: listings, settings and the registry are all
 * re-read only when their watch fired.
 */
export class Reaper {
  private readonly completed: DirIndex;
  private readonly failed: DirIndex;
  private readonly registry: RegistryView;
  private registryDirty = true;
  private settings: RetentionSettings | null = null;
  private leader = false;
  /** The registration this reaper leads as (its listings' watches belong to its session). */
  private leaderAs: string | null = null;
  private warnedFailed = false;
  private readonly stopper = new AbortController();
  /** The sleep between passes; only `stop` cuts it short, and a stop is remembered. */
  private readonly alarm: Alarm;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly ctx: EngineContext,
    /** This worker's registry node path (`null` while unregistered). */
    private readonly me: () => string | null,
    private readonly options: ReaperOptions = {},
    /**
     * The live registry names as the worker's bucket ownership last read them (`null` before
     * its first read in this registration). A worker passes its own view, so the registry is
     * listed and each node read once per change, not once more by the reaper: without it,
     * every worker read every registration twice (2 x N² reads for a fleet of N joining).
     * Without it (a reaper on its own) the reaper keeps a view of its own.
     */
    private readonly sharedRegistry?: () => readonly string[] | null,
  ) {
    const now = () => ctx.clock.now();
    this.alarm = new Alarm(ctx.clock);
    this.completed = new DirIndex(ctx.coordinator, now);
    this.failed = new DirIndex(ctx.coordinator, now, false);
    const buckets = Array.from({ length: ctx.layout.buckets }, (_, b) => b);
    this.completed.setDirs(buckets.map((b) => ctx.layout.bucketPath(AREA.completed, b)));
    this.failed.setDirs(buckets.map((b) => ctx.layout.bucketPath(AREA.failed, b)));
    this.registry = new RegistryView(ctx.coordinator, ctx.layout.registry);
  }

  /** Starts the pass loop (idempotent). */
  start(): void {
    if (this.loop) return;
    this.loop = this.run();
  }

  /** Stops the loop and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.alarm.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { logger } = this.ctx;
    while (!this.stopper.signal.aborted) {
      let pause = this.options.intervalMs ?? 5000;
      try {
        const report = await this.pass();
        // Work found means the world is busy: come back soon, before records pile up.
        const removed = report.records + Object.values(report.extra).reduce((a, b) => a + b, 0);
        // Not registered yet (a worker just starting): look again soon, not a full interval on.
        const unregistered = this.me() === null;
        if (report.backlog || removed > 0 || unregistered)
          pause = this.options.busyIntervalMs ?? 500;
      } catch (err) {
        if (this.stopper.signal.aborted) return;
        // Connection trouble or a lost session (the worker deals with those and says so):
        // the next pass starts over from fresh listings. Anything else is worth a warning.
        if (!QUIET_CODES.has(codeOf(err) ?? ''))
          logger.warn({ err: String(err) }, 'reaper pass failed; trying again later');
        this.resetIndexes();
      }
      await this.alarm.sleep(pause);
    }
  }

  private resetIndexes(): void {
    this.completed.reset();
    this.failed.reset();
    this.settings = null;
    this.registryDirty = true;
    for (const retentionTask of this.options.tasks ?? []) retentionTask.reset?.();
  }

  /** Whether this worker is the world's reaper now (re-reads the registry when it changed). */
  async isLeader(): Promise<boolean> {
    const path = this.me();
    if (path === null) return false;
    const names = this.sharedRegistry ? this.sharedRegistry() : await this.ownRegistry();
    if (names === null) return false;
    const mine = path.slice(path.lastIndexOf('/') + 1);
    let first: string | undefined;
    for (const name of names) if (first === undefined || seq(name) < seq(first)) first = name;
    return first === mine;
  }

  /** The reaper's own registry view, re-read when its watch fired. */
  private async ownRegistry(): Promise<readonly string[]> {
    if (this.registryDirty) {
      this.registryDirty = false;
      await this.registry.refresh(() => {
        this.registryDirty = true;
      });
    }
    return this.registry.names;
  }

  /** One pass: removes what is due (at most the budget) and counts the failed records. */
  async pass(): Promise<ReapReport> {
    const report: ReapReport = {
      ...emptyRemoveReport(),
      leader: false,
      extra: {},
      completedKept: 0,
      failed: 0,
      backlog: false,
    };
    const leader = await this.isLeader();
    // Losing leadership forgets the listings. So does leading under another registration: a
    // lost session takes every watch along, and the worker registers again under a new name
    // (a renewal can fall between two passes, which then never see it unregistered); the
    // next pass lists everything afresh in the new session.
    const as = this.me();
    if (!leader || as !== this.leaderAs) {
      if (this.leader) this.resetIndexes();
      this.leader = false;
      this.leaderAs = null;
    }
    if (!leader) {
      this.options.onPass?.(report);
      return report;
    }
    this.leader = true;
    this.leaderAs = as;
    report.leader = true;
    if (this.settings === null) {
      const read = await readRetention(this.ctx.coordinator, this.ctx.layout.world, () => {
        this.settings = null;
      });
      this.settings = read.settings;
    }
    const settings = this.settings;
    const budget = this.options.budget ?? 10_000;
    await Promise.all([this.completed.refresh(), this.failed.refresh()]);
    const now = this.ctx.clock.now();
    const victims = this.completed.victims(now, settings.completed, budget);
    Object.assign(
      report,
      await removeCompleted(this.ctx, victims, (v, relist) => this.completed.forget(v, relist)),
    );
    report.backlog = victims.length >= budget;
    for (const task of this.options.tasks ?? []) {
      // One task's trouble (say, a reply directory too large to list) must not stop the rest.
      try {
        const removed = await task.pass(settings, now, budget);
        report.extra[task.name] = removed;
        if (removed >= budget) report.backlog = true;
      } catch (err) {
        this.ctx.logger.warn({ task: task.name, err: String(err) }, 'reaper task failed');
        task.reset?.();
      }
    }
    report.completedKept = this.completed.size;
    report.failed = this.failed.size;
    this.warnFailed(settings, report.failed);
    this.options.onPass?.(report);
    return report;
  }

  /** One warning when the failed records pass the cap, and again after they fell below it. */
  private warnFailed(settings: RetentionSettings, failed: number): void {
    const cap = settings.failed.warnCount;
    const over = cap !== null && failed > cap;
    if (over && !this.warnedFailed)
      this.ctx.logger.warn(
        { world: this.ctx.layout.world, failed, cap },
        'failed records past the retention cap: they stay until retried or cancelled (zoott retry / cancel / clean --failed)',
      );
    this.warnedFailed = over;
  }
}
