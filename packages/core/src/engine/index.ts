export { Claimer, type ClaimerOptions } from './claimer.js';
export {
  type CorruptNode,
  type CorruptSink,
  type NodeShape,
  readNode,
  shapes as nodeShapes,
} from './corrupt.js';
export { createEngine, Engine, type EngineOptions, type QueueParent } from './engine.js';
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
export type { CompleteOptions, CompleteOutcome, ExtraOpsOutcome } from './settle.js';
export { backoffDelay, systemEngineClock } from './support.js';
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
