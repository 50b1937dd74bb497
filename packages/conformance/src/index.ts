export {
  ADMIN_PASSWORD,
  ADMIN_USER,
  expectCode,
  recorder,
  type SessionRecorder,
  type SuiteContext,
  sessionRecorder,
  type WatchRecorder,
} from './context.js';
export {
  type CoordinatorHarness,
  type HarnessSource,
  SUITE_GROUPS,
  type SuiteGroup,
} from './harness.js';
export { coordinatorSuite } from './suite.js';
