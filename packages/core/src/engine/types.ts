import type { TaskKey } from '../tree/keys.js';
import type { AnyTasks, TaskData, TaskResult, TaskType } from '../tree/task-map.js';
import type { CorruptNode } from './corrupt.js';
import type { TraceCarrier } from './telemetry.js';

/** Placement hints: which worker, file or dataset a task would like to run near. */
export interface PlacementHints {
  /** A worker's `server` identity (usually its host name). */
  server?: string;
  filename?: string;
  dataset?: string;
}

/** Exponential backoff with full jitter between attempts, capped at `maxMs`. */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

/** Per-task options given to `queue`. */
export interface QueueOptions {
  /** Integer in [-999999, 999999]; higher runs first. Default 0. */
  priority?: number;
  hints?: PlacementHints;
  /** Attempts before the task is dead-lettered. Default 3. */
  maxAttempts?: number;
  backoff?: Partial<BackoffOptions>;
  /** Not claimable before this time (ms since the epoch, engine clock). */
  notBefore?: number;
}

/**
 * Why an attempt failed: the one shape every report of a failure has, from the engine
 * outward (the failed record, `lastError`, settle outcomes, the worker's `failed` event, the
 * logs, the CLI and the dashboard). `code` is the thrown error's own string (or number)
 * `code` (`ENOENT`, a ZoottError's), `HANDLER_ERROR` when it had none, or the engine's
 * reason when a result could not be stored (`DATA_TOO_LARGE`, `RESULT_NOT_JSON`).
 */
export interface TaskError {
  code: string;
  message: string;
  stack?: string;
}

/** Who holds a claim. */
export interface ClaimIdentity {
  worker: string;
  session: string;
  host?: string;
  pid?: number;
  at: number;
}

/** The data of a pending entry: a copy of everything a worker needs. */
export interface EntryData {
  name: string;
  type: string;
  data?: unknown;
  attempts: number;
  maxAttempts: number;
  backoff: BackoffOptions;
  hints?: PlacementHints;
  notBefore?: number;
  queuedAt: number;
  lastError?: TaskError;
  claim?: ClaimIdentity;
  /** The queue call that wrote the entry: finds the write again after a lost reply. */
  qid?: string;
  /**
   * Position in the `queueMany` call that wrote the entry. The tasks of one multi share one
   * creation zxid (the queue order), so this orders them among themselves.
   */
  qn?: number;
  /** The producer's trace context (with `EngineOptions.telemetry`): the worker's spans continue it. */
  trace?: TraceCarrier;
  /**
   * The version of the task's tree node this queueing left: a re-queue's `set` made it. Absent
   * for a new task, whose node was created with this entry (version 0). The completion copies
   * it into the record, so the reaper can guard its removal without reading the tree node.
   */
  treeVersion?: number;
}

/** Data of a completed record. */
export interface CompletedRecord {
  name: string;
  type: string;
  result?: unknown;
  attempts: number;
  worker: string;
  queuedAt: number;
  startedAt: number;
  completedAt: number;
  /** What the task reported (`ctx.progress` / `ctx.log`), when it did and it fit. */
  report?: TaskProgress;
  /** The trace context of the run (with `EngineOptions.telemetry`), for children without one. */
  trace?: TraceCarrier;
  /**
   * The version of the task's tree node when the task was queued (its entry's `treeVersion`,
   * 0 for a new task). The reaper removes the record guarded by it, with no read of the tree
   * node; a record written before it was kept has none, and the reaper reads the node then.
   */
  treeVersion?: number;
}

/** Data of a failed record (dead letter). */
export interface FailedRecord {
  name: string;
  type: string;
  error: TaskError;
  attempts: number;
  worker?: string;
  queuedAt: number;
  failedAt: number;
}

/** What `queue` did for one matched parent. */
export interface QueuedTask {
  key: TaskKey;
  /** Pending entry path created. */
  entry: string;
  /** State the task was in before (`null` for a new task or one without state). */
  previous: 'pending' | 'completed' | 'failed' | null;
}

/** The fields of a {@link Claim} that do not depend on its task type. */
export interface ClaimFields {
  key: TaskKey;
  name: string;
  /** 1 for the first run. */
  attempt: number;
  maxAttempts: number;
  hints?: PlacementHints;
  /** Session that owns the working node; the claim is void in any other session. */
  session: string;
  worker: string;
  startedAt: number;
  /** Internal bookkeeping: entry path and version after the claim. */
  readonly entryPath: string;
  readonly entryVersion: number;
  /** The task's priority, as its pending entry's name carried it (parsed once, at listing). */
  readonly priority: number;
  readonly workingPath: string;
  readonly entry: EntryData;
}

/**
 * A claim held by this process. Pass it to `complete` or `fail`. With a task map, `type`
 * narrows `data`: `if (claim.type === 'request') claim.data.url`.
 */
export type Claim<M = AnyTasks, K extends TaskType<M> = TaskType<M>> = {
  [T in K]: ClaimFields & { type: T; data: TaskData<M, T> };
}[K];

/**
 * Result of `complete` / `fail`: `dropped` when fencing refused it. A failed attempt says why
 * (`error`, as recorded); a completion whose result could not be stored is one.
 */
export type SettleOutcome =
  | { status: 'completed' }
  | { status: 'retrying'; notBefore: number; attempt: number; error: TaskError }
  | { status: 'failed'; error: TaskError }
  | { status: 'dropped'; reason: string };

/** The states a task can be in. */
export type TaskStateName = 'pending' | 'working' | 'completed' | 'failed';

/** Counts per area of a world. `pending` excludes working and failed tasks. */
export interface AreaCounts {
  pending: number;
  working: number;
  completed: number;
  failed: number;
}

/** The fields of a {@link TaskRecord} that do not depend on its task type. */
export interface TaskRecordFields {
  key: TaskKey;
  name: string;
  /** `null`: the tree node exists without state (cancelled while it had children). */
  state: TaskStateName | null;
  priority?: number;
  attempts: number;
  maxAttempts?: number;
  hints?: PlacementHints;
  notBefore?: number;
  queuedAt?: number;
  worker?: ClaimIdentity;
  startedAt?: number;
  completedAt?: number;
  failedAt?: number;
  error?: TaskError;
  lastError?: TaskError;
  /**
   * This task's nodes that could not be read (not JSON, wrong shape); the fields they hold
   * are missing above. Absent when every node read fine.
   */
  corrupt?: CorruptNode[];
}

/**
 * One task's full record, from `task(key)`. With a task map, `type` narrows `data` and
 * `result`. The record is read back from ZooKeeper as stored: the types are the producers'
 * and handlers' promise, not a run-time check.
 */
export type TaskRecord<M = AnyTasks> = {
  [T in TaskType<M>]: TaskRecordFields & {
    type: T;
    data?: TaskData<M, T>;
    /** Set once the task completed. */
    result?: TaskResult<M, T>;
  };
}[TaskType<M>];

/** One node of `tree()`. */
export interface TreeNode {
  key: TaskKey;
  name: string;
  type: string;
  state: TaskStateName | null;
  children: TreeNode[];
  /** Why the tree node's data could not be read (its type is then unknown, `''`). */
  corrupt?: string;
}

/** A task in `list(state)`. */
export interface ListedTask {
  key: TaskKey;
  state: TaskStateName;
  priority?: number;
}

/** The kinds of state change `engine.events()` reports. */
export type EngineEventType =
  | 'queued'
  | 'started'
  | 'completed'
  | 'failed'
  | 'retried'
  | 'cancelled'
  /** A completed task left the world: its record expired (retention), or it was cancelled. */
  | 'removed'
  /** Only with `events({ progress: true })`: a working task reported progress or a log line. */
  | 'progress';

/** One state change of a task, from `engine.events()` (by key; read the record with `task(key)`). */
export interface EngineEvent {
  type: EngineEventType;
  key: TaskKey;
  world: string;
  /** With `progress` events: what the task has reported so far. */
  progress?: TaskProgress;
  /**
   * With `failed` and `retried` events: why the attempt failed, as recorded (absent when the
   * task was given back without failing, or its entry was gone before it could be read).
   */
  error?: TaskError;
}

/** Fields first, message second: the shape pino uses, so a pino logger fits as is. */
export interface EngineLogger {
  debug?(fields: object, msg: string): void;
  info?(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error?(fields: object, msg: string): void;
}

/** Time and randomness the engine depends on; injectable for deterministic tests. */
export interface EngineClock {
  now(): number;
  /** Resolves after `ms`, or early (without error) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** One line a handler logged. */
export interface TaskLogLine {
  /** When it was logged (ms since the epoch, worker clock). */
  at: number;
  line: string;
}

/** What a running (or finished) task reported, as stored in its progress node. */
export interface TaskProgress {
  /** The attempt that wrote it (a retry starts afresh). */
  attempt: number;
  worker: string;
  updatedAt: number;
  /** The last value given to `ctx.progress` (a number, or small JSON); absent if none. */
  progress?: unknown;
  /** The last 50 (`MAX_LOG_LINES`) lines, oldest first. */
  log: TaskLogLine[];
  /** Lines logged before the first one kept. */
  dropped: number;
}
