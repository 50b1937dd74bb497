import type { Op } from '../contract/coordinator.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type { TaskLimits } from '../tree/limits.js';
import type { CorruptSink } from './corrupt.js';
import { consoleLogger } from './logger.js';
import type { Telemetry } from './telemetry.js';
import type { BackoffOptions, Claim, EngineClock, EngineLogger, SettleOutcome } from './types.js';

/** Options of {@link createEngine}. */
export interface EngineOptions {
  world: string;
  /** Buckets per area when `init` creates the world (default 64); an existing world keeps its own. */
  buckets?: number;
  clock?: EngineClock;
  logger?: EngineLogger;
  limits?: Partial<TaskLimits>;
  /** Defaults for `queue` options. */
  defaults?: { maxAttempts?: number; backoff?: Partial<BackoffOptions> };
  /** Largest completed/failed record in bytes (default 900 KiB, under ZooKeeper's ~1 MB). */
  maxRecordBytes?: number;
  /**
   * Told about every node the inspection reads (`task`, `tree`, a parent pattern of `queue`)
   * skip because its data is not JSON or not of zoott's shape. Default: a warning in the log.
   */
  onCorrupt?: CorruptSink;
  /**
   * Ops that join a completion's multi (a reply node, say), made ready before it, as
   * `complete`'s own `extraOps` do; they come after those. An error it throws is the
   * completion's: the claim is not settled.
   */
  completionOps?: (claim: Claim, result: unknown) => Promise<readonly Op[]>;
  /**
   * Told after every settle through this engine (`complete`, `fail`, `release`, `forget`),
   * for metrics, logs, or work that follows a completion; awaited before the settle returns.
   * What it throws is logged, never the settle's error: the task is settled either way.
   */
  onSettled?: SettleListener;
  /**
   * Traces every task (queue, wait, run and settle spans; docs/tracing.md) through this
   * implementation, `otelTelemetry()` of `@zoott/otel` for OpenTelemetry. Unset: no spans, and
   * nothing stored or read for them.
   */
  telemetry?: Telemetry;
}

/** What {@link EngineOptions.onSettled} is told besides the claim and its outcome. */
export interface SettleDetail {
  /** The result `complete` was given. */
  result?: unknown;
  /** The error `fail` was given. */
  error?: unknown;
}

/**
 * Called after a settle attempt. A claim given back (`release`, the worker is stopping) or
 * forgotten (`forget`, the session was lost) is reported as `dropped`.
 */
export type SettleListener = (
  claim: Claim,
  outcome: SettleOutcome,
  detail: SettleDetail,
) => void | Promise<void>;

/** Tells `options.onSettled` of a settle; what it throws is logged, the settle stands. */
export async function tellSettled(
  options: Pick<EngineOptions, 'onSettled' | 'logger'>,
  claim: Claim,
  outcome: SettleOutcome,
  detail: SettleDetail,
): Promise<void> {
  const listener = options.onSettled;
  if (!listener) return;
  try {
    await listener(claim, outcome, detail);
  } catch (err) {
    (options.logger ?? consoleLogger).warn(
      { key: claim.key.join(KEY_SEPARATOR), err: String(err) },
      'onSettled listener failed',
    );
  }
}
