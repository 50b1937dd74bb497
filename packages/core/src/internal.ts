// Everything the other zoott packages build on: the adapters (path and frame rules, error
// mapping), the CLI, the worker daemon and the dashboard (world layout, key codec, entry
// names, registry), and the tests. A superset of the package root, with no stability
// promise: names here may change in any release. Applications import `@zoott/core`.

// The admin face is part of internal too: the tests and the packages reach everything here.
export * from './admin.js';
export { Claimer, type ClaimerOptions } from './claim/claimer.js';
export * from './contract/index.js';
export * from './engine/index.js';
export {
  createEngine,
  Engine,
  type EngineOptions,
  type QueueManyRequest,
  type QueueParent,
  type QueueRequest,
} from './front/engine.js';
export * from './retention/index.js';
export * from './tree/index.js';
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
export {
  REGISTRY_PACE_MAX_MS,
  REGISTRY_PACE_MS,
  WorkerMembership,
} from './worker/worker-membership.js';
