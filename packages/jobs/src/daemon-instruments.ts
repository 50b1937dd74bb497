import type { Engine, SettleListener, TaskHandler } from '@zoott/core';
import type { Logger } from 'pino';
import { RACE_TYPE, raceWorld } from './constants.js';
import type { ProcessTracker } from './handlers/options.js';
import { WorkerMetrics } from './metrics.js';
import { TaskLog } from './task-log.js';

/**
 * What a daemon tells about its work: the metrics, the task log, and the job processes
 * running now (their pids are their process groups, which `kill` ends).
 */
export class DaemonInstruments {
  readonly metrics = new WorkerMetrics();
  readonly processes = new Set<number>();
  private readonly taskLog: TaskLog;

  constructor(
    log: Logger,
    nodeId: string,
    private readonly world: string,
  ) {
    this.taskLog = new TaskLog(log, nodeId);
  }

  /** Counts the job processes the handlers start and end. */
  readonly tracker: ProcessTracker = {
    started: (pid: number) => {
      this.metrics.processesStarted.inc();
      this.processes.add(pid);
      this.metrics.processes.set(this.processes.size);
    },
    ended: (pid: number) => {
      this.processes.delete(pid);
      this.metrics.processes.set(this.processes.size);
    },
  };

  /** The settle listener of an engine: counts the outcome and logs it. */
  settledIn(engine: () => Engine): SettleListener {
    return (claim, outcome) => {
      const labels = { type: claim.type };
      const { metrics } = this;
      if (outcome.status === 'completed') metrics.completed.inc(labels);
      else if (outcome.status === 'retrying') metrics.retried.inc(labels);
      else if (outcome.status === 'failed') metrics.failed.inc(labels);
      // A claim given back on stop is not a lost result.
      else if (outcome.status === 'dropped' && outcome.reason !== 'released')
        metrics.dropped.inc(labels);
      void this.taskLog.settled(engine(), claim, outcome);
    };
  }

  /** `handler`, logged and measured: started, running, and how long it took. */
  instrument(type: string, handler: TaskHandler): TaskHandler {
    return async (task) => {
      // Race coordinators run in the race world; every other type in the served world.
      this.taskLog.started(type === RACE_TYPE ? raceWorld(this.world) : this.world, task);
      const { metrics } = this;
      metrics.started.inc({ type });
      metrics.running.inc();
      const t0 = process.hrtime.bigint();
      let outcome = 'error';
      try {
        const value = await handler(task);
        outcome = 'ok';
        return value;
      } finally {
        metrics.running.dec();
        metrics.duration.observe({ type, outcome }, Number(process.hrtime.bigint() - t0) / 1e9);
      }
    };
  }
}
