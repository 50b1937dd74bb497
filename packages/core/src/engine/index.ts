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
  diagnoseWorld,
  type Finding,
  type FindingKind,
  QUARANTINE_ROOT,
  type Quarantined,
  repairWorld,
} from './doctor.js';
export {
  createEngine,
  Engine,
  type EngineOptions,
  type QueueParent,
  type QueueRequest,
} from './engine.js';
export {
  bucketName,
  DEFAULT_BUCKETS,
  type EntryKind,
  type EntryName,
  entryPrefix,
  fnv1a32,
  MAX_PRIORITY,
  parseEntryName,
  WorldLayout,
} from './layout.js';
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
export { listWorlds } from './worlds.js';
