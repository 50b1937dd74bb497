import type { Engine } from '@zoott/core';
import type { WorkerMetrics } from './metrics.js';

/**
 * The world's task counts for `/metrics`, read from ZooKeeper in the background: one read at
 * a time, none while the session is not connected (it would only wait for the session). A
 * scrape shows the last counts read and how old they are.
 */
export class WorldCounts {
  private reading: Promise<void> | null = null;
  private readAt: number | null = null;

  constructor(
    private readonly engine: Engine,
    private readonly metrics: WorkerMetrics,
    private readonly world: string,
    private readonly connected: () => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts a read unless one is out; resolves when the read out now has landed. */
  refresh(): Promise<void> {
    if (this.reading === null && this.connected()) {
      this.reading = this.engine
        .counts()
        .then((counts) => {
          this.metrics.setCounts(this.world, counts);
          this.readAt = this.now();
        })
        .catch(() => undefined)
        .finally(() => {
          this.reading = null;
        });
    }
    return this.reading ?? Promise.resolve();
  }

  /** The age gauge of the counts shown. */
  collect(): void {
    if (this.readAt !== null) this.metrics.worldTasksAge.set((this.now() - this.readAt) / 1000);
  }
}
