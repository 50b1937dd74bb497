export { type Clock, ManualClock, systemClock } from './clock.js';
export { MemoryCoordinator } from './coordinator.js';
export {
  DEFAULT_MAX_DATA_BYTES,
  DEFAULT_SESSION_TIMEOUT_MS,
  type MemoryConnectOptions,
  MemoryServer,
  type MemoryServerOptions,
} from './server.js';
