import type { SuiteContext } from './context.js';
import type { CoordinatorHarness } from './harness.js';

/** Registers one group's tests; `ctx()` is valid inside a test, `harness` only for static facts. */
export type GroupTests = (ctx: () => SuiteContext, harness: CoordinatorHarness) => void;
