import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';

/** Parents remembered at most; the oldest are forgotten first (their children then wait). */
const PARENTS_KEPT = 4096;
/** Types remembered at most (a bound against unbounded type names, not a working limit). */
const TYPES_KEPT = 4096;

/**
 * What one engine (one world) knows of children queued while their parents ran. A child
 * queued while its parent runs is not in the listing the parent's worker chose from; the
 * parent's completion looks for such a child only when this engine queued one (its handler,
 * through the task context, queues through the worker's engine), or when tasks of its type
 * have been seen with children. Looking after every completion cost a read per task (in a
 * drain, nearly half the worker's requests). A child queued by another process, or by
 * another Engine object of this process, under a task of a type not seen with children yet
 * is seen like any newly queued task, at its bucket's next listing (within `relistMs`).
 */
export class ChildHints {
  /** Parents (encoded keys) under which this engine queued a child lately, oldest first. */
  private readonly queuedUnder = new Set<string>();
  /** Task types whose tasks this engine has seen with children. */
  private readonly typesWithChildren = new Set<string>();

  /** This engine queues `child` (a key with a parent): called before the write. */
  noteChildQueued(child: TaskKey): void {
    if (child.length < 2) return;
    const id = child.slice(0, -1).join(KEY_SEPARATOR);
    this.queuedUnder.delete(id);
    this.queuedUnder.add(id);
    if (this.queuedUnder.size > PARENTS_KEPT) {
      for (const oldest of this.queuedUnder) {
        this.queuedUnder.delete(oldest);
        break;
      }
    }
  }

  /** Whether this engine queued a child under `parent` since the last `take` for it. */
  queuedChildUnder(parent: TaskKey): boolean {
    return this.queuedUnder.has(parent.join(KEY_SEPARATOR));
  }

  /** Whether this engine queued a child under `parent` since the last call for it. */
  take(parent: TaskKey): boolean {
    return this.queuedUnder.delete(parent.join(KEY_SEPARATOR));
  }

  /** A task of `type` had children (a listing showed one under it). */
  noteTypeHasChildren(type: string): void {
    if (this.typesWithChildren.size < TYPES_KEPT) this.typesWithChildren.add(type);
  }

  /** Whether tasks of `type` have been seen here with children. */
  typeHasChildren(type: string): boolean {
    return this.typesWithChildren.has(type);
  }
}
