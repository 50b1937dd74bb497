// @zoott/core: a task tree and job runner over a Coordinator (ZooKeeper, or the in-memory
// adapter). This root is the product: the engine, the worker, the typed task model, errors
// and the Coordinator contract an adapter gives you. ZooKeeper recipes live in
// `@zoott/core/recipes`, Yothalot job shapes in `@zoott/core/jobs`; the building blocks the
// other zoott packages share are in `@zoott/core/internal` (no stability promise).

export type { Claimer, ClaimerOptions } from './claim/claimer.js';
export {
  type Acl,
  CREATOR_ALL_ACL,
  digestAcl,
  OPEN_ACL,
  Perms,
  READ_ACL,
} from './contract/acl.js';
// The Coordinator contract: what an adapter (@zoott/zk-adapter, @zoott/memory-adapter) gives.
export type {
  Coordinator,
  CreateOptions,
  NodeData,
  Op,
  OpResult,
  SessionEvent,
  SessionEventType,
  SessionListener,
  SessionState,
  Stat,
  TreeEvent,
  TreeListener,
  WatchEvent,
  WatchEventType,
  Watcher,
  WatchOptions,
} from './contract/coordinator.js';
// Errors: every failure is a ZoottError with a stable code.
export {
  type ErrorCode,
  isZoottError,
  ZoottError,
  type ZoottErrorDetails,
} from './contract/errors.js';
export { utf8 } from './contract/paths.js';
export { systemEngineClock } from './engine/clock.js';
export type { AncestorResult, ResultReaders } from './engine/parent-results.js';
export type { PauseState } from './engine/pause.js';
export { isPermanent, PermanentError } from './engine/permanent.js';
export type { TaskLogLine, TaskProgress } from './engine/progress.js';
export { QueueManyError } from './engine/queue-many.js';
export type { CompleteOptions, CompleteOutcome, ExtraOpsOutcome } from './engine/settle.js';
// The tracing hook: an implementation (`@zoott/otel` for OpenTelemetry) in `EngineOptions.telemetry`.
export { SPAN_ATTRIBUTES } from './engine/task-spans.js';
export type {
  Telemetry,
  TelemetryAttributes,
  TelemetryContextManager,
  TelemetrySpan,
  TelemetrySpanKind,
  TelemetrySpanOptions,
  TelemetryTracer,
  TraceCarrier,
} from './engine/telemetry.js';
export type {
  AreaCounts,
  BackoffOptions,
  Claim,
  ClaimFields,
  ClaimIdentity,
  EngineClock,
  EngineEvent,
  EngineEventType,
  EngineLogger,
  ListedTask,
  PlacementHints,
  QueuedTask,
  QueueOptions,
  SettleOutcome,
  TaskError,
  TaskRecord,
  TaskRecordFields,
  TaskStateName,
  TreeNode,
} from './engine/types.js';
// Waiting for one task's end (`engine.waitFor`).
export type { TaskEnd, WaitForOptions, WaitingState } from './engine/wait-for-task.js';
// The engine of one world: init, queue, claim, complete, fail, retry, cancel, inspect, events.
export {
  createEngine,
  Engine,
  type EngineOptions,
  type QueueManyRequest,
  type QueueParent,
  type QueueRequest,
  type SettleDetail,
  type SettleListener,
} from './front/engine.js';
// Rate limits: task starts per type across a world's workers, shares from the registry.
export * from './rate-limits/index.js';
// What a world keeps: retention settings (stored in the world) and the reaper's reports.
export {
  DEFAULT_RETENTION,
  type KeepLimits,
  parseCount,
  parseDuration,
  type ReaperOptions,
  type ReapReport,
  type RetentionPatch,
  type RetentionSettings,
  type RetentionTask,
  readRetention,
  updateRetention,
} from './retention/index.js';
// Schedules: cron ticks queued by the one scheduler the workers of a world elect.
export * from './schedules/index.js';
export type { NameFunctor } from './tree/functors.js';
export type { TaskKey } from './tree/keys.js';
export type { TaskLimits } from './tree/limits.js';
export type { LocalityScore, Orderable, PeerPlace, WorkerPlace } from './tree/ordering.js';
export type { ParentPattern } from './tree/patterns.js';
// The task model: a task map types a world's tasks once; keys, parents, names, limits.
export type {
  AnyTasks,
  ParentType,
  TaskData,
  TaskInfo,
  TaskMap,
  TaskResult,
  TaskType,
  TaskTypeSpec,
} from './tree/task-map.js';
/** The version of zoott's packages (they are released together). */
export { ZOOTT_VERSION } from './version.js';
// Workers: handlers by task type, run with concurrency, observed through typed events.
export {
  type Handlers,
  runWorker,
  type TaskContext,
  type TaskHandler,
  type WorkerHandle,
  type WorkerOptions,
  type WorkerStats,
} from './worker/worker.js';
export type {
  WorkerCancelledEvent,
  WorkerCompletedEvent,
  WorkerDrainedEvent,
  WorkerErrorEvent,
  WorkerEventMap,
  WorkerFailedEvent,
} from './worker/worker-events.js';
export { checkDatasets } from './worker/worker-membership.js';
export type { TaskResultReaders } from './worker/worker-types.js';
