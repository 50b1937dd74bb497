// @zoott/jobs: submit Yothalot jobs and races and wait for their results,
// serve the built-in job types from your own worker, or run the whole daemon in-process.
// The pieces it is built from are in src/internal.ts (`@zoott/jobs/internal`), for its own
// tests and the zoott-worker program's; no stability promise there.

export {
  DEFAULT_EXCHANGE,
  JOB_TYPE,
  LEGACY_RACES_ROOT,
  LEGACY_REPLY_ROOT,
  RACE_TYPE,
  RACE_WORLD_BUCKETS,
  RACER_TYPE,
  RACES_ROOT,
  REPLY_ROOT,
  racesRoot,
  raceWorld,
  replyRoot,
} from './constants.js';
export { startWorkerDaemon, type WorkerDaemon, type WorkerDaemonConfig } from './daemon.js';
// Serving: the built-in job handlers for runWorker, or the whole daemon.
export { jobHandlers } from './handlers/index.js';
export type { JobHandlerOptions } from './handlers/options.js';
// Results the AMQP bridge could not publish: parked, then listed, retried or dropped.
export {
  dropParked,
  listParked,
  type ParkedData,
  type ParkedResult,
  type Parking,
  parkOps,
  readParkedArea,
  retryParked,
  type UnreadParked,
} from './parked.js';
export {
  publishResult,
  REPLY_PATH_CHECK,
  type ReceivedResult,
  type ReplyAddress,
  replyDir,
  replySegments,
  type WaitForResultOptions,
  waitForResult,
} from './reply.js';
// Retention of reply results: the daemon's reaper task, and `zoott clean --results`.
export {
  type CleanResultsOptions,
  cleanResults,
  ReplyResultsRetention,
} from './reply-retention.js';
// Submitting jobs and races, and reading their results from the reply channel.
export {
  type SubmitOptions,
  type SubmittedJob,
  submitJob,
  submitRace,
} from './submit.js';
export { VERSION } from './version.js';
