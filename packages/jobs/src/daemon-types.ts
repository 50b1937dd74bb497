import type { Acl, Coordinator, Handlers, Telemetry } from '@zoott/core';
import type { Logger } from 'pino';
import type { FileSettings } from './config.js';
import type { MetricsServer, WorkerMetrics } from './metrics.js';

/** Programmatic configuration of {@link startWorkerDaemon}: the settings plus objects. */
export interface WorkerDaemonConfig extends Omit<FileSettings, 'handlers'> {
  /** A ready session (memory adapter, or one the caller manages); the daemon never closes it. */
  coordinator?: Coordinator;
  /** How to connect when no `coordinator` is given (default zk-adapter's `connectZk`). */
  connectFn?: (
    connectString: string,
    options: {
      sessionTimeoutMs?: number;
      auth: Array<{ scheme: string; auth: string }>;
      defaultAcl: readonly Acl[];
    },
  ) => Promise<Coordinator>;
  /** Handlers by type, or the path of a module exporting them. */
  handlers?: Handlers | string;
  /** A pino logger to use (default: JSON lines on stdout at `logLevel`). */
  logger?: Logger;
  /**
   * Traces every task the daemon runs (`otelTelemetry()` of `@zoott/otel`, with an SDK the
   * caller started). The `trace` setting is the zoott-worker program's: it starts the SDK and
   * passes this.
   */
  telemetry?: Telemetry;
}

/** A running daemon. */
export interface WorkerDaemon {
  readonly nodeId: string;
  readonly world: string;
  /** Types served in the world. */
  readonly types: readonly string[];
  readonly coordinator: Coordinator;
  readonly metrics: WorkerMetrics;
  /** The metrics endpoint, when `metricsPort` was set. */
  readonly metricsServer: MetricsServer | null;
  /** Registry node of the main worker loop (null while unregistered). */
  readonly registryPath: string | null;
  /** Pids (= process groups) of the job processes running now. */
  readonly processes: ReadonlySet<number>;
  /** Stops claiming, lets running tasks finish within `graceMs`, aborts the rest, shuts down. */
  stop(): Promise<void>;
  /**
   * For a second signal: kills every job process group at once (synchronously, before the
   * returned promise), stops the loops and closes the session without waiting for anything.
   */
  kill(): Promise<void>;
  /** Settles when the daemon has stopped; rejects on a fatal error. */
  readonly done: Promise<void>;
}
