import { KEY_SEPARATOR, type TaskKey } from '../tree/keys.js';

/**
 * Parents (world and encoded key) under which this process queued a child lately, in the
 * order of the latest queueing. A child queued while its parent runs is not in the listing
 * the parent's worker chose from; the parent's completion looks for such a child only when
 * this process queued one (its handler, say), or when tasks of its type have been seen here
 * with children. Looking after every completion cost a read per task (in a drain, nearly
 * half the worker's requests); a child queued by another process under a task of a type not
 * seen with children yet is seen like any newly queued task, at its bucket's next listing
 * (within `relistMs`).
 */
const childQueuedUnder = new Set<string>();
/** Parents remembered at most; the oldest are forgotten first (their children then wait). */
const PARENTS_KEPT = 4096;

/** `world` and `name` as one set member. */
const inWorld = (world: string, name: string) => `${world}\u0000${name}`;
const parentId = (world: string, parent: TaskKey) => inWorld(world, parent.join(KEY_SEPARATOR));

/** This process queues `child` (a key with a parent) in `world`: called before the write. */
export function noteChildQueued(world: string, child: TaskKey): void {
  if (child.length < 2) return;
  const id = parentId(world, child.slice(0, -1));
  childQueuedUnder.delete(id);
  childQueuedUnder.add(id);
  if (childQueuedUnder.size > PARENTS_KEPT) {
    for (const oldest of childQueuedUnder) {
      childQueuedUnder.delete(oldest);
      break;
    }
  }
}

/**
 * Task types (by world) whose tasks this process has seen with children: a completion of
 * such a type looks for a late child even when another process may have queued it.
 */
const typesWithChildren = new Set<string>();
/** Types remembered at most (a bound against unbounded type names, not a working limit). */
const TYPES_KEPT = 4096;

/** A task of `type` in `world` had children (a listing showed one under it). */
export function noteTypeHasChildren(world: string, type: string): void {
  if (typesWithChildren.size < TYPES_KEPT) typesWithChildren.add(inWorld(world, type));
}

/** Whether tasks of `type` in `world` have been seen here with children. */
export function typeHasChildren(world: string, type: string): boolean {
  return typesWithChildren.has(inWorld(world, type));
}

/** Whether this process queued a child under `parent` since the last call for it. */
export function takeChildHint(world: string, parent: TaskKey): boolean {
  return childQueuedUnder.delete(parentId(world, parent));
}
