// The engine's ground floor as `@zoott/core/internal` shows it; the wings above it (claim,
// front, worker, retention, admin) are exported from internal.ts directly, so no arrow runs
// from this folder up to them.
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
// Tests drive the engine's cancellable wait through both of its clocks.
export { Alarm } from './alarm.js';
export {
  type BucketArea,
  type BucketContents,
  bucketNumbers,
  entryState,
  isDeadEntry,
  type ListBucketOptions,
  type ListedEntry,
  type ListedRecord,
  listBucket,
  waitingEntries,
} from './area-listing.js';
export { ChildHints } from './child-hints.js';
export { backoffDelay, systemEngineClock } from './clock.js';
export {
  type CorruptNode,
  type CorruptSink,
  type NodeShape,
  readNode,
  shapes as nodeShapes,
} from './corrupt.js';
// Readers of stored failures (the dashboard's failed list) get the one error shape.
export { readTaskError, toTaskError, UNCODED_ERROR } from './errors.js';
export {
  AREA,
  areaParent,
  bucketName,
  byClaimOrder,
  DEFAULT_BUCKETS,
  type EntryKind,
  type EntryName,
  EPHEMERAL_LEVELS,
  entryPrefix,
  fnv1a32,
  MAX_PRIORITY,
  PARKED_AREA,
  parkedRoot,
  parseEntryName,
  topNodeName,
  topNodePath,
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
export { resolveQueueOptions } from './queue.js';
export {
  bucketOwners,
  MAX_WORKER_TYPE_LENGTH,
  MAX_WORKER_TYPES,
  ownedBuckets,
  RegistryView,
  STEAL_WATCHERS,
  stealWatchers,
  type WorkerInfo,
} from './registry.js';
export type { CompleteOptions, CompleteOutcome, ExtraOpsOutcome } from './settle.js';
export type * from './types.js';
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
