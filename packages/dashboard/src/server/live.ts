import type { Coordinator, EngineEvent, EngineLogger } from '@zoott/core';
import type { DashboardData } from './data.js';

/** What the live stream carries; the page applies `task` events and re-reads on the rest. */
export type LiveMessage =
  | { event: 'task'; data: EngineEvent & { at: number } }
  | { event: 'workers'; data: { world: string } }
  | { event: 'resync'; data: { world: string; reason: string } }
  | { event: 'status'; data: { zookeeper: string } };

export type LiveListener = (message: LiveMessage) => void;

/** Throughput is counted in slots of this length, over the last `SLOTS` slots. */
export const SLOT_MS = 10_000;
export const SLOTS = 30;

/** Tasks settled in one time slot of the throughput chart. */
export interface ThroughputSlot {
  /** Slot start, ms since the epoch. */
  t: number;
  completed: number;
  failed: number;
}

const RESTART_MIN_MS = 250;
const RESTART_MAX_MS = 5000;

/**
 * The live view of one world: one engine event stream (children watches on every bucket) and
 * one registry watch, shared by every connected page. When the stream ends with an error
 * (connection or session trouble) it is started again with backoff, and pages are told to
 * re-read, since events in the gap are gone.
 */
export class WorldHub {
  private readonly listeners = new Set<LiveListener>();
  private readonly slots = new Map<number, ThroughputSlot>();
  private abort = new AbortController();
  private closed = false;
  private restartDelay = RESTART_MIN_MS;
  private registryArmed = false;
  /** Settles once the first snapshot is taken (events after it are seen). */
  ready: Promise<void>;
  private markReady: () => void = () => {};

  constructor(
    readonly world: string,
    private readonly data: DashboardData,
    private readonly logger: EngineLogger,
  ) {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    void this.run();
    void this.watchRegistry();
  }

  subscribe(listener: LiveListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends a message to every page watching this world. */
  emit(message: LiveMessage): void {
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch (err) {
        this.logger.warn({ err }, 'dashboard: live listener failed');
      }
    }
  }

  /** Counts per slot, oldest first, empty slots included. */
  throughput(now = Date.now()): ThroughputSlot[] {
    const current = Math.floor(now / SLOT_MS) * SLOT_MS;
    const out: ThroughputSlot[] = [];
    for (let i = SLOTS - 1; i >= 0; i--) {
      const time = current - i * SLOT_MS;
      out.push(this.slots.get(time) ?? { t: time, completed: 0, failed: 0 });
    }
    return out;
  }

  private count(type: 'completed' | 'failed', at: number): void {
    const time = Math.floor(at / SLOT_MS) * SLOT_MS;
    let slot = this.slots.get(time);
    if (!slot) {
      slot = { t: time, completed: 0, failed: 0 };
      this.slots.set(time, slot);
      for (const key of this.slots.keys()) if (key < time - SLOTS * SLOT_MS) this.slots.delete(key);
    }
    slot[type]++;
  }

  private async run(): Promise<void> {
    let restarted = false;
    while (!this.closed) {
      const signal = this.abort.signal;
      // With progress: the task pages show what a running task reports as it comes.
      let live = () => {};
      const ready = new Promise<void>((resolve) => {
        live = resolve;
      });
      const iterator = this.data
        .engine(this.world)
        .events({ signal, progress: true, onReady: () => live() })
        [Symbol.asyncIterator]();
      try {
        // The first next() starts the stream: once it is live, every later change comes out.
        const first = iterator.next();
        await Promise.race([first.then(() => undefined), ready]);
        this.markReady();
        this.restartDelay = RESTART_MIN_MS;
        // Events between the old stream's end and this snapshot are lost: pages re-read now.
        if (restarted)
          this.emit({
            event: 'resync',
            data: { world: this.world, reason: 'live stream restarted' },
          });
        let step = await first;
        while (!step.done) {
          const at = Date.now();
          const event = step.value;
          if (event.type === 'completed' || event.type === 'failed') this.count(event.type, at);
          this.emit({ event: 'task', data: { ...event, at } });
          step = await iterator.next();
        }
      } catch (err) {
        // Log the first failure of a run of them, not every retry while ZooKeeper is away.
        if (this.restartDelay === RESTART_MIN_MS)
          this.logger.warn(
            { world: this.world, err: err instanceof Error ? err.message : String(err) },
            'dashboard: event stream failed; restarting',
          );
      } finally {
        // Pages wait for the first snapshot; a failed one must not keep them waiting.
        this.markReady();
      }
      if (this.closed) return;
      // Either the stream failed or `resync()` aborted it on purpose: start over.
      await new Promise((r) => setTimeout(r, this.restartDelay).unref());
      this.restartDelay = Math.min(RESTART_MAX_MS, this.restartDelay * 2);
      if (this.abort.signal.aborted) this.abort = new AbortController();
      restarted = true;
    }
  }

  /** Restarts the event stream (after a reconnect, watches may be gone) and the registry watch. */
  resync(): void {
    if (this.closed) return;
    this.abort.abort();
    this.registryArmed = false;
    void this.watchRegistry();
  }

  private async watchRegistry(): Promise<void> {
    if (this.registryArmed || this.closed) return;
    this.registryArmed = true;
    const coordinator: Coordinator = this.data.coordinator;
    try {
      const layout = (await this.data.engine(this.world).context()).layout;
      await coordinator.children(layout.registry, {
        watch: () => {
          this.registryArmed = false;
          if (this.closed) return;
          this.emit({ event: 'workers', data: { world: this.world } });
          void this.watchRegistry();
        },
      });
    } catch {
      // No registry yet, or no connection: the next resync arms it again.
      this.registryArmed = false;
    }
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
    this.listeners.clear();
  }
}
