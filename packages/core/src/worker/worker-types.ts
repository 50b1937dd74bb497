import type { ResultReaders } from '../engine/parent-results.js';
import type { PauseState } from '../engine/pause.js';
import type { ClaimFields, EngineClock, EngineLogger } from '../engine/types.js';
import type { Engine, EngineOptions } from '../front/engine.js';
import type { ReaperOptions } from '../retention/reaper.js';
import type { LocalityScore } from '../tree/ordering.js';
import type {
  AnyTasks,
  ParentType,
  TaskData,
  TaskMap,
  TaskResult,
  TaskType,
} from '../tree/task-map.js';
import type { WorkerEventMap, WorkerStats } from './worker-events.js';

/** Tasks one worker runs at once unless told otherwise. */
export const DEFAULT_CONCURRENCY = 1;
/**
 * Idle time before a worker looks at buckets it does not own, and the head start a bucket's
 * owner gets after a change there before an idle worker looks again.
 */
export const DEFAULT_STEAL_AFTER_MS = 1000;
/** Longest idle sleep before a worker checks its (watched, cached) listings again anyway. */
export const DEFAULT_POLL_MS = 5000;
/** How long `stop()` waits for running handlers before it aborts them. */
export const DEFAULT_STOP_TIMEOUT_MS = 30_000;

/**
 * A handler's reads of its ancestors' results. With a task map whose entry for `T` declares
 * `parent`, `parentResult()` has that parent type's result type (no type argument: the map
 * says it); otherwise the caller names what it expects, `parentResult<R>()`, as without a map.
 */
export type TaskResultReaders<M, T extends TaskType<M>> =
  string extends TaskType<M>
    ? ResultReaders
    : [ParentType<M, T>] extends [never]
      ? ResultReaders
      : Omit<ResultReaders, 'parentResult'> & {
          /**
           * The parent's result, typed by the parent type the map declares: `undefined` for a
           * top-level task, or when the parent has no completed record.
           */
          parentResult(): Promise<TaskResult<M, ParentType<M, T>> | undefined>;
        };

/**
 * What a handler gets for one task. With a task map, `data` has the data type of the
 * handler's task type, and `parentResult()` the result type of its declared parent type.
 * The task's fields are its own properties (what `JSON.stringify` and a spread show); its
 * functions (`progress`, `log`, `parentResult`, `ancestorResults`, `signal`) are read from
 * it, bound to the task (`const { progress } = task` works), and a spread does not copy them.
 */
export type TaskContext<M = AnyTasks, K extends TaskType<M> = TaskType<M>> = {
  [T in K]: Pick<ClaimFields, 'key' | 'name' | 'attempt' | 'maxAttempts' | 'hints' | 'worker'> & {
    type: T;
    data: TaskData<M, T>;
    /**
     * Aborted when the task is cancelled, the session is lost (the claim is gone) or the
     * worker stops hard. After a cancel the handler's result is not recorded.
     */
    signal: AbortSignal;
    /**
     * Reports progress (a number such as 0.42, or small JSON): stored with the task,
     * throttled (one write per 500 ms at most), shown by `zoott show` and `zoott watch`.
     */
    progress(value: unknown): void;
    /** Adds a log line to the task's log (the last 50 lines are kept, 500 characters each). */
    log(line: string): void;
  } & TaskResultReaders<M, T>;
}[K];

/**
 * Runs one task; the resolved value is the result, a throw is a failed attempt. With a task
 * map, the result must have the type's result type.
 */
export type TaskHandler<M = AnyTasks, K extends TaskType<M> = TaskType<M>> = (
  task: TaskContext<M, K>,
) => TaskResult<M, K> | Promise<TaskResult<M, K>>;

/**
 * Handlers by task type; types without a handler are left for other workers. With a task
 * map, a key that is not one of its types, or a handler of the wrong shape, is a compile error.
 */
export type Handlers<M = AnyTasks> =
  string extends TaskType<M>
    ? // Without a map: any type name (as before maps existed, so existing code keeps compiling).
      Readonly<Record<string, TaskHandler<M>>>
    : { readonly [K in TaskType<M>]?: TaskHandler<M, K> };

/** Options of {@link runWorker}. */
export interface WorkerOptions<M extends TaskMap<M> = AnyTasks> {
  world: string;
  /** Tasks run at once. Default {@link DEFAULT_CONCURRENCY}. */
  concurrency?: number;
  /** Identity in working nodes and records. Default `w-` and 8 hex digits from the clock's `random()`. */
  id?: string;
  /** Locality identity matched against `hints.server` (usually the host name). */
  server?: string;
  host?: string;
  pid?: number;
  /** Whether a `filename` hint's file is local here; given: this worker advertises files. */
  hasFile?: (filename: string) => boolean;
  /** Datasets cached here, advertised in the registry and matched against `hints.dataset`. */
  datasets?: readonly string[];
  /** Extra locality score, added to the hint score when ordering candidates. */
  locality?: LocalityScore;
  /** How long a task another live worker may serve better waits before this one takes it. */
  localityWaitMs?: number;
  lookahead?: number;
  /**
   * Tree watches on this worker's buckets (`ClaimerOptions.entryEvents`; needs an adapter with
   * `watchTree` and ZooKeeper 3.6+): new entries are listed as they are created, a child
   * queued while its parent runs here is read at once (so its parent's completion can hand it
   * the slot), and a watched bucket needs no children watch, so an own completion costs no
   * re-listing. Default `'small'`: only on buckets whose listings are small (a worker at a
   * modest rate); a big listing keeps its children watch, cheaper there than an event per
   * create, claim and completion. `true`: every owned bucket; `'children'`: every owned
   * bucket once the worker claims a task with listed children; `false`: none (a server with
   * any recursive watch checks every path of every change for one).
   */
  entryEvents?: boolean | 'children' | 'small';
  /**
   * Idle time before this worker looks at buckets it does not own, and the owner's head start
   * after a change there (see docs/protocol.md, idle workers). Default {@link DEFAULT_STEAL_AFTER_MS}.
   */
  stealAfterMs?: number;
  /** Longest idle sleep before listings are checked again anyway. Default {@link DEFAULT_POLL_MS}. */
  pollMs?: number;
  /** Call `renewSession()` after the session is lost, retried with capped backoff until it works. Default true. */
  renewSession?: boolean;
  /**
   * A task that runs longer than this is watched for a cancel (its `signal` then aborts).
   * Default 250 ms: shorter tasks cost no extra read, a cancel still lands within a second.
   */
  cancelWatchAfterMs?: number;
  /** On `stop()`, running handlers are aborted after this long. Default {@link DEFAULT_STOP_TIMEOUT_MS}. */
  stopTimeoutMs?: number;
  /**
   * Stand as a candidate for the world's one scheduler (`runScheduler`), which queues the
   * tasks of the world's cron schedules. Default true.
   */
  scheduler?: boolean;
  /** Stops the worker gracefully when aborted. */
  signal?: AbortSignal;
  clock?: EngineClock;
  logger?: EngineLogger;
  /** Reuse an engine (else one is made from these options); its task map types the handlers. */
  engine?: Engine<M>;
  engineOptions?: Omit<EngineOptions, 'world'>;
  /**
   * The world's reaper, which removes what the world's retention settings let go; every
   * worker runs one and only the elected one acts. `false` runs none. Default: on.
   */
  retention?: false | ReaperOptions;
}

/**
 * A running worker. It is also an event source for code that embeds it: `completed` and
 * `failed` per settled attempt, `error` for what went wrong outside a handler, `drained`
 * when it has nothing left to run (see {@link WorkerEventMap}).
 */
export interface WorkerHandle<M = AnyTasks> {
  readonly id: string;
  /**
   * Registry node of the current session (`/zoott_workers/<world>/worker-_p<hex>_<seq>`
   * on ZooKeeper, whose adapter marks sequential creates), `null` while unregistered.
   */
  readonly registryPath: string | null;
  /** Buckets this worker owns now. */
  readonly buckets: readonly number[];
  readonly stats: Readonly<WorkerStats>;
  /** What is paused in the world, as this worker sees it now (it claims none of that). */
  readonly paused: Readonly<PauseState>;
  /**
   * This worker's side of the world's rate limit for `type`, as it sees it now: its share
   * (starts per second) and the starts it may take at once; `null` when `type` has no limit.
   */
  rateLimit(type: string): { perSecond: number; available: number } | null;
  /** Stops claiming, waits for running handlers (aborting them after `stopTimeoutMs`), unregisters. */
  stop(): Promise<void>;
  /** Settles when the worker has stopped; rejects on a fatal error. */
  readonly done: Promise<void>;
  /** Calls `listener` on every `event`; returns a function that removes it. */
  on<E extends keyof WorkerEventMap<M>>(
    event: E,
    listener: (payload: WorkerEventMap<M>[E]) => void,
  ): () => void;
  /** Calls `listener` on the next `event` only; returns a function that removes it. */
  once<E extends keyof WorkerEventMap<M>>(
    event: E,
    listener: (payload: WorkerEventMap<M>[E]) => void,
  ): () => void;
  /** Removes a listener added with `on` or `once`. */
  off<E extends keyof WorkerEventMap<M>>(
    event: E,
    listener: (payload: WorkerEventMap<M>[E]) => void,
  ): void;
}
