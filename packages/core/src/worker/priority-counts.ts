/**
 * How many tasks of each priority a worker runs. Priorities are few, so the lowest is found
 * by a walk over the distinct ones, not kept in a heap.
 */
export class PriorityCounts {
  private readonly counts = new Map<number, number>();

  add(priority: number): void {
    this.counts.set(priority, (this.counts.get(priority) ?? 0) + 1);
  }

  remove(priority: number): void {
    const left = (this.counts.get(priority) ?? 1) - 1;
    if (left > 0) this.counts.set(priority, left);
    else this.counts.delete(priority);
  }

  /** The lowest priority counted; +Infinity when none is. */
  lowest(): number {
    let low = Number.POSITIVE_INFINITY;
    for (const priority of this.counts.keys()) if (priority < low) low = priority;
    return low;
  }
}
