// Tests drive the engine's cancellable wait through both of its clocks.

export {
  type AdminFix,
  adminCommand,
  adminsOf,
  type Denied,
  deniedBy,
  NamespaceError,
  principalOf,
  showAclShort,
  showDenied,
  zkCliAcl,
} from './acl-principal.js';
export { Alarm } from './alarm.js';
// Tests stand in for another process's queue with it (no hint left here).
export { takeChildHint } from './child-hints.js';
export { Claimer, type ClaimerOptions } from './claimer.js';
export { backoffDelay, systemEngineClock } from './clock.js';
export {
  type CorruptNode,
  type CorruptSink,
  type NodeShape,
  readNode,
  shapes as nodeShapes,
} from './corrupt.js';
export {
  type DiagnoseOptions,
  type DiagnosisProgress,
  diagnoseWorld,
  diagnoseWorldMeta,
  type Finding,
  type FindingKind,
  type NotMoved,
  QUARANTINE_ROOT,
  type Quarantined,
  type RepairOutcome,
  repairWorld,
} from './doctor.js';
export {
  createEngine,
  Engine,
  type EngineOptions,
  type QueueManyRequest,
  type QueueParent,
  type QueueRequest,
} from './engine.js';
// Readers of stored failures (the dashboard's failed list) get the one error shape.
export { readTaskError, toTaskError, UNCODED_ERROR } from './errors.js';
export {
  areaParent,
  bucketName,
  DEFAULT_BUCKETS,
  type EntryKind,
  type EntryName,
  entryPrefix,
  fnv1a32,
  MAX_PRIORITY,
  PARKED_AREA,
  parkedRoot,
  parseEntryName,
  WorldLayout,
} from './layout.js';
export { META_VERSION, parseMeta, type WorldMeta } from './meta.js';
export {
  type AncestorResult,
  completedRecord,
  type ResultReaders,
  resultReaders,
} from './parent-results.js';
export {
  type PauseChange,
  type PauseState,
  PauseWatch,
  pauseOf,
  readPause,
  setPause,
  typePaused,
} from './pause.js';
export {
  checkProgressValue,
  DEFAULT_PROGRESS_INTERVAL_MS,
  MAX_LOG_LINE_CHARS,
  MAX_LOG_LINES,
  MAX_PROGRESS_BYTES,
  PROGRESS_AREA,
  type ProgressReporter,
  ProgressWriter,
  parseProgress,
  progressPath,
  progressReporter,
  readProgress,
  type TaskLogLine,
  type TaskProgress,
} from './progress.js';
export {
  PART_BYTES,
  type QuarantineRecord,
  readQuarantined,
} from './quarantine.js';
export { resolveQueueOptions } from './queue.js';
export { bucketOwners, ownedBuckets, type WorkerInfo } from './registry.js';
export * from './retention/index.js';
export type { CompleteOptions, CompleteOutcome, ExtraOpsOutcome } from './settle.js';
export type * from './types.js';
export {
  type Handlers,
  runWorker,
  type TaskContext,
  type TaskHandler,
  type WorkerHandle,
  type WorkerOptions,
  type WorkerStats,
} from './worker.js';
export type {
  WorkerCancelledEvent,
  WorkerCompletedEvent,
  WorkerDrainedEvent,
  WorkerErrorEvent,
  WorkerEventMap,
  WorkerFailedEvent,
} from './worker-events.js';
export {
  type AclMismatch,
  describeAcl,
  type LockDownOptions,
  type LockDownReport,
  lockDownWorld,
  sameAcl,
  worldAclMismatches,
  worldTops,
} from './world-acl.js';
export {
  ensureNamespace,
  ensureWorldPath,
  ensureWorldSideNodes,
  type NamespaceReport,
  refusedBy,
  SHARED_ACL,
  schedulerElectionPath,
  sharedParents,
  worldAreaNodes,
  worldSideNodes,
} from './world-nodes.js';
export { listWorlds } from './worlds.js';
