import type { Coordinator } from '../contract/coordinator.js';
import type { TaskLimits } from '../tree/limits.js';
import type { CorruptSink } from './corrupt.js';
import type { WorldLayout } from './layout.js';
import type { BackoffOptions, EngineClock, EngineLogger } from './types.js';

/** What every engine part shares once the world's meta has been read. */
export interface EngineContext {
  /** The session every engine part reads and writes the world through. */
  readonly coordinator: Coordinator;
  readonly layout: WorldLayout;
  readonly clock: EngineClock;
  readonly logger: EngineLogger;
  readonly limits: Partial<TaskLimits> | undefined;
  readonly defaults: { maxAttempts: number; backoff: BackoffOptions };
  /** Largest completed/failed record, in bytes; larger results are refused. */
  readonly maxRecordBytes: number;
  /** Where the inspection reads (task, tree, parent patterns) report nodes they cannot read. */
  readonly onCorrupt: CorruptSink;
}
