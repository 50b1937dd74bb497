import { AREA, type Area, ENTRY_KIND, type EntryName, parseEntryName } from './layout.js';
import type { EngineEventType } from './types.js';

/**
 * A task's state as its bucket's nodes say it: its pending entries, its working node and its
 * completed record. The event stream keeps one per task it has seen.
 */
export interface TaskNodes {
  /** Pending entries by name (a re-queue has two for the length of its multi). */
  entries: Map<string, EntryName>;
  working: boolean;
  completed: boolean;
}

/**
 * What the nodes mean. A completed record wins over everything, then a dead entry, then a
 * working node (with or without its entry: a failing attempt deletes its claimed entry before
 * it writes the retry's), then the newest entry. The engine orders the ops of its multis so
 * that the state after any prefix of one is the state before it or after it (the creates of
 * a re-queue and an operator retry come before their deletes): a tree watch reports the ops
 * one by one, and no intermediate state may read as a transition.
 */
export type TaskState =
  | { state: 'completed' }
  | { state: 'failed'; entry: string }
  | { state: 'working'; entry: string | null }
  | { state: 'pending'; entry: string; retry: boolean };

export function emptyNodes(): TaskNodes {
  return { entries: new Map(), working: false, completed: false };
}

/** The nodes of task `key` in `tasks`, added empty when it has none yet. */
export function nodesIn(tasks: Map<string, TaskNodes>, key: string): TaskNodes {
  let nodes = tasks.get(key);
  if (!nodes) {
    nodes = emptyNodes();
    tasks.set(key, nodes);
  }
  return nodes;
}

export function stateOf(nodes: TaskNodes | undefined): TaskState | undefined {
  if (!nodes) return undefined;
  if (nodes.completed) return { state: 'completed' };
  let newest: EntryName | null = null;
  for (const entry of nodes.entries.values()) {
    if (entry.kind === ENTRY_KIND.dead) return { state: 'failed', entry: entry.name };
    if (!newest || entry.seq > newest.seq) newest = entry;
  }
  if (nodes.working) return { state: 'working', entry: newest?.name ?? null };
  if (newest)
    return { state: 'pending', entry: newest.name, retry: newest.kind === ENTRY_KIND.retry };
  return undefined;
}

/**
 * The event of one observed change (a tree watch's node event): `null` when the task's state
 * did not change. A working task stays the same attempt until its working node goes; a
 * pending task with a new entry was queued (or retried) again.
 */
export function liveTransition(
  before: TaskState | undefined,
  after: TaskState | undefined,
): EngineEventType | null {
  if (!after) return before ? (before.state === 'completed' ? 'removed' : 'cancelled') : null;
  switch (after.state) {
    case 'completed':
      return before?.state === 'completed' ? null : 'completed';
    case 'failed':
      return before?.state === 'failed' ? null : 'failed';
    case 'working':
      return before?.state === 'working' ? null : 'started';
    case 'pending':
      if (before?.state === 'pending' && before.entry === after.entry) return null;
      return before?.state === 'working' || after.retry ? 'retried' : 'queued';
  }
}

/**
 * The events between two states seen apart (two listings, or the last state before a
 * connection loss and the first after it): the shortest way the task can have gone, so
 * every step it must have taken comes out once, in order (a task seen pending and then
 * completed was started in between). Steps that left no trace (attempts that failed and
 * were retried in between) cannot be told and are not invented.
 */
export function impliedSteps(
  before: TaskState | undefined,
  after: TaskState | undefined,
): EngineEventType[] {
  if (!after) {
    if (!before) return [];
    return [before.state === 'completed' ? 'removed' : 'cancelled'];
  }
  const from = before?.state;
  // Into a run: queued first if the task was not pending, retried first if it was running
  // or failed before (a new attempt, or an operator retry).
  const intoRun = (): EngineEventType[] => {
    if (from === 'pending') return [];
    if (from === 'working' || from === 'failed') return ['retried'];
    return ['queued'];
  };
  switch (after.state) {
    case 'completed':
      if (from === 'completed') return [];
      if (from === 'working') return ['completed'];
      return [...intoRun(), 'started', 'completed'];
    case 'failed':
      if (from === 'failed') return [];
      if (from === 'working') return ['failed'];
      return [...intoRun(), 'started', 'failed'];
    case 'working':
      if (from === 'working') {
        // The same attempt unless its entry changed (a retry ran in between).
        const same = before?.state === 'working' && before.entry === after.entry;
        return same ? [] : ['retried', 'started'];
      }
      return [...intoRun(), 'started'];
    case 'pending':
      if (before?.state === 'pending' && before.entry === after.entry) return [];
      if (from === 'working' || from === 'failed') return ['retried'];
      // A retry entry of a task not seen running: it ran and failed meanwhile.
      if (after.retry)
        return [...(from === 'pending' ? [] : ['queued' as const]), 'started', 'retried'];
      return ['queued'];
  }
}

/** A node of a bucket, from a tree event's path or a listing: its task and what it is. */
export interface NodeRef {
  bucket: number;
  area: Area;
  encodedKey: string;
  /** The entry, for a pending area node. */
  entry?: EntryName;
}

/** Applies one node's creation (`present`) or deletion to its task's nodes. */
export function applyNode(nodes: TaskNodes, ref: NodeRef, present: boolean): void {
  if (ref.area === AREA.working) nodes.working = present;
  else if (ref.area === AREA.completed) nodes.completed = present;
  else if (ref.entry) {
    if (present) nodes.entries.set(ref.entry.name, ref.entry);
    else nodes.entries.delete(ref.entry.name);
  }
}

/** What a node name in a bucket of `area` refers to; `null` for a foreign node. */
export function nodeRef(area: Area, bucket: number, name: string): NodeRef | null {
  if (area === AREA.pending) {
    const entry = parseEntryName(name);
    return entry ? { bucket, area, encodedKey: entry.encodedKey, entry } : null;
  }
  return { bucket, area, encodedKey: name };
}
