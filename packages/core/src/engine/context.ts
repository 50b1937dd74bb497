import type { Coordinator } from '../contract/coordinator.js';
import type { TaskLimits } from '../tree/limits.js';
import type { ChildHints } from './child-hints.js';
import { systemEngineClock } from './clock.js';
import type { CorruptSink } from './corrupt.js';
import type { EngineOptions } from './engine-options.js';
import { WorldLayout } from './layout.js';
import { consoleLogger } from './logger.js';
import type { QueueIds } from './queue-ids.js';
import type { Telemetry } from './telemetry.js';
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
  /** Where the spans of tasks go; `undefined`: no tracing at all. */
  readonly telemetry: Telemetry | undefined;
  /** Children this engine queued under running parents: their completions look for them. */
  readonly hints: ChildHints;
  /** The marks this engine's queue calls leave on their entries. */
  readonly queueIds: QueueIds;
}

/** What an engine keeps across its contexts (a context is made again by `init`). */
export interface EngineOwned {
  readonly hints: ChildHints;
  readonly queueIds: QueueIds;
}

/** The context of `world` (of `buckets` buckets) for an engine made with `o`. */
export function makeContext(
  coordinator: Coordinator,
  world: string,
  buckets: number,
  options: EngineOptions,
  owned: EngineOwned,
): EngineContext {
  const backoff = { baseMs: 1000, maxMs: 60_000, ...(options.defaults?.backoff ?? {}) };
  const logger = options.logger ?? consoleLogger;
  return {
    coordinator,
    layout: new WorldLayout(world, buckets),
    clock: options.clock ?? systemEngineClock,
    logger,
    limits: options.limits,
    defaults: { maxAttempts: options.defaults?.maxAttempts ?? 3, backoff },
    maxRecordBytes: options.maxRecordBytes ?? 900 * 1024,
    onCorrupt:
      options.onCorrupt ??
      ((n) => logger.warn({ path: n.path, reason: n.reason }, 'corrupt node skipped')),
    telemetry: options.telemetry,
    hints: owned.hints,
    queueIds: owned.queueIds,
  };
}
