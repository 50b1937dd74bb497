import { ZoottError } from '../contract/errors.js';
import type { Claim, SettleOutcome, TaskError } from '../engine/types.js';
import type { TaskKey } from '../tree/keys.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { AnyTasks, TaskData, TaskResult, TaskType } from '../tree/task-map.js';

/** What every attempt event says about its task. */
interface AttemptFields {
  key: TaskKey;
  name: string;
  /** 1 for the first run. */
  attempt: number;
}

/** `completed`: a handler's result was recorded. With a task map, `type` narrows `result`. */
export type WorkerCompletedEvent<M = AnyTasks> = {
  [T in TaskType<M>]: AttemptFields & { type: T; data: TaskData<M, T>; result: TaskResult<M, T> };
}[TaskType<M>];

/**
 * `failed`: a handler threw and the attempt was recorded as failed. `final` is false when
 * the task will run again after `notBefore`, true when it was dead-lettered.
 */
export type WorkerFailedEvent<M = AnyTasks> = {
  [T in TaskType<M>]: AttemptFields & {
    type: T;
    data: TaskData<M, T>;
    error: TaskError;
    final: boolean;
    /** When the retry becomes claimable (ms since the epoch); absent when `final`. */
    notBefore?: number;
  };
}[TaskType<M>];

/**
 * `error`: something went wrong outside a handler: the loop met an unexpected error, an
 * outcome could not be recorded, a result was dropped (session lost, fencing refused it), or
 * the worker stopped on a fatal error (`done` rejects with the same error).
 */
export interface WorkerErrorEvent {
  error: unknown;
  message: string;
  /** The task concerned, when there is one. */
  key?: TaskKey;
}

/**
 * `drained`: the worker has nothing running and found nothing it can claim: once after it
 * started (an empty world too), then again after each run of work. More work may still come
 * (a retry after its backoff, a new queue).
 */
export interface WorkerDrainedEvent {
  stats: Readonly<WorkerStats>;
}

/**
 * `cancelled`: the task was cancelled while its handler ran; the handler's signal was
 * aborted and its result was not recorded.
 */
export type WorkerCancelledEvent<M = AnyTasks> = {
  [T in TaskType<M>]: AttemptFields & { type: T; data: TaskData<M, T> };
}[TaskType<M>];

/** The events of a {@link WorkerHandle}, by name. */
export interface WorkerEventMap<M = AnyTasks> {
  completed: WorkerCompletedEvent<M>;
  failed: WorkerFailedEvent<M>;
  cancelled: WorkerCancelledEvent<M>;
  error: WorkerErrorEvent;
  drained: WorkerDrainedEvent;
}

type Listener = (payload: never) => void;

/**
 * A small typed event source (no `node:events`: the core runs wherever a Coordinator does).
 * A listener that throws is reported to `onListenerError` and does not stop the others, nor
 * the worker; an `error` with no listener is not thrown (unlike an EventEmitter).
 */
export class WorkerEvents<E extends object> {
  private readonly listeners = new Map<keyof E, { fn: Listener; once: boolean }[]>();

  constructor(private readonly onListenerError: (event: keyof E, err: unknown) => void) {}

  // A list is never changed once stored (on and off store a new one): an emit walks it as it
  // was when the emit began, without copying it for every event.
  on<K extends keyof E>(event: K, fn: (payload: E[K]) => void, once = false): () => void {
    const list = this.listeners.get(event) ?? [];
    this.listeners.set(event, [...list, { fn: fn as Listener, once }]);
    return () => this.off(event, fn);
  }

  off<K extends keyof E>(event: K, fn: (payload: E[K]) => void): void {
    const list = this.listeners.get(event);
    if (!list) return;
    const index = list.findIndex((l) => l.fn === fn);
    if (index >= 0) this.listeners.set(event, [...list.slice(0, index), ...list.slice(index + 1)]);
  }

  /** Whether anyone listens to `event`: a payload nobody hears need not be built. */
  listening(event: keyof E): boolean {
    return (this.listeners.get(event)?.length ?? 0) > 0;
  }

  emit<K extends keyof E>(event: K, payload: E[K]): void {
    const list = this.listeners.get(event);
    if (!list || list.length === 0) return;
    for (const listener of list) {
      if (listener.once) this.off(event, listener.fn as (payload: E[K]) => void);
      try {
        (listener.fn as (payload: E[K]) => void)(payload);
      } catch (err) {
        this.onListenerError(event, err);
      }
    }
  }
}

/** Counts of what a worker did since it started. */
export interface WorkerStats {
  claimed: number;
  completed: number;
  retried: number;
  failed: number;
  dropped: number;
}

/** Tells the listeners that a task was cancelled while it ran. */
export function reportCancelled(events: WorkerEvents<WorkerEventMap>, claim: Claim): void {
  events.emit('cancelled', {
    key: claim.key,
    name: claim.name,
    type: claim.type,
    data: claim.data,
    attempt: claim.attempt,
  });
}

/** Tells the listeners what became of an attempt. */
export function reportOutcome(
  events: WorkerEvents<WorkerEventMap>,
  claim: Claim,
  outcome: SettleOutcome,
  value: unknown,
  released: boolean,
  recordError: unknown,
): void {
  if (outcome.status === 'completed') {
    // Every completion passes here: one object, and none when nobody listens.
    if (events.listening('completed'))
      events.emit('completed', {
        key: claim.key,
        name: claim.name,
        type: claim.type,
        data: claim.data,
        attempt: claim.attempt,
        result: value,
      });
    return;
  }
  const task = {
    key: claim.key,
    name: claim.name,
    type: claim.type,
    data: claim.data,
    attempt: claim.attempt,
  };
  switch (outcome.status) {
    case 'retrying':
    case 'failed': {
      // As recorded: a result that could not be stored failed the task with its own reason.
      const error: TaskError = outcome.error;
      const final = outcome.status === 'failed';
      events.emit(
        'failed',
        final ? { ...task, error, final } : { ...task, error, final, notBefore: outcome.notBefore },
      );
      return;
    }
    case 'dropped':
      if (released) return;
      events.emit('error', {
        // A void claim (session gone, or fencing refused the write) is not this worker's to record.
        error: recordError ?? new ZoottError('NOT_OWNER', outcome.reason),
        message: `outcome of ${claim.key.join(KEY_SEPARATOR)} not recorded: ${outcome.reason}`,
        key: claim.key,
      });
  }
}
