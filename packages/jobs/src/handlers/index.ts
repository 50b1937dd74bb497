import { createEngine, type Handlers } from '@zoott/core';
import { JOB_TYPE, RACE_TYPE, RACER_TYPE } from '../constants.js';
import { type JobHandlerOptions, resolveHandlerOptions } from './options.js';
import { runRaceTask } from './race.js';
import { runRacerTask } from './racer.js';
import { runJobTask } from './regular-job.js';

export type { JobHandlerOptions, ProcessTracker } from './options.js';
export { racerName, readRaceInputDir } from './race.js';
export type { RacerOutcomeRecord } from './racer.js';

/**
 * The handlers of the built-in job types, for `runWorker` or a daemon:
 * `zoott.job` (a regular job), `zoott.race` (a race's coordinator) and `zoott.racer`
 * (one racer). Executables run only when they match `allowExec`.
 */
export function jobHandlers(options: JobHandlerOptions): Handlers {
  const handlerContext = resolveHandlerOptions(options, () =>
    createEngine(options.coordinator, {
      world: options.world,
      ...(options.logger ? { logger: options.logger } : {}),
    }),
  );
  return {
    [JOB_TYPE]: (task) => runJobTask(handlerContext, task),
    [RACE_TYPE]: (task) => runRaceTask(handlerContext, task),
    [RACER_TYPE]: (task) => runRacerTask(handlerContext, task),
  };
}
