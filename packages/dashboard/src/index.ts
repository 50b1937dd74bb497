export { startDashboard } from './server/dashboard.js';
export type {
  FailedList,
  FailedTask,
  OldestPending,
  RetryAllResult,
  WorkerView,
} from './server/data.js';
export type { LiveMessage, ThroughputSlot } from './server/live.js';
export {
  DASHBOARD_TOKEN_ENV,
  type DashboardHandle,
  type DashboardOptions,
  DEFAULT_HOST,
  DEFAULT_PORT,
  isLoopback,
} from './server/options.js';
