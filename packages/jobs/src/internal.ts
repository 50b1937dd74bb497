// Everything the job layer is built from (config, policy, process supervision, metrics, the
// reply channel), for its own tests and tools. No stability promise; the package root
// exports the library users import.
export * from './config.js';
export * from './constants.js';
export * from './daemon.js';
export * from './daemon-access.js';
export { unheardDeadline, unheardLimitMs } from './expiry-kill.js';
export * from './handlers/index.js';
export * from './handlers-module.js';
export * from './job-engine.js';
export * from './jobs/index.js';
export * from './legacy-replies.js';
export * from './limits.js';
export * from './metrics.js';
export * from './parked.js';
export * from './policy.js';
export * from './reply.js';
export * from './submit.js';
export { VERSION } from './version.js';
