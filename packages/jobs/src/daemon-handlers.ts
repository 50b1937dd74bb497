import { hostname } from 'node:os';
import { resolve } from 'node:path';
import {
  type Coordinator,
  type Engine,
  type EngineLogger,
  type TaskHandler,
  ZoottError,
} from '@zoott/core';
import type { Logger } from 'pino';
import { settingDefault } from './config.js';
import { BUILTIN_TYPES } from './constants.js';
import type { DaemonInstruments } from './daemon-instruments.js';
import type { WorkerDaemonConfig } from './daemon-types.js';
import { jobHandlers } from './handlers/index.js';
import { loadHandlers } from './handlers-module.js';

/** What a daemon serves: its types, each with its instrumented handler, and where jobs run. */
export interface ServedHandlers {
  types: string[];
  handlers: Record<string, TaskHandler>;
  allowExec: readonly string[];
  workDir: string;
  dataDir: string;
}

/**
 * The handlers a daemon serves: the built-in job types (only with an `allowExec` list) and
 * the custom ones, narrowed to `types`.
 *
 * @throws ZoottError INVALID_CONFIG for a type without a handler, or nothing to serve.
 */
export async function servedHandlers(
  config: WorkerDaemonConfig,
  at: {
    coordinator: Coordinator;
    world: string;
    nodeId: string;
    engine: Engine;
    log: Logger;
    engineLog: EngineLogger;
    instruments: DaemonInstruments;
  },
): Promise<ServedHandlers> {
  const custom =
    typeof config.handlers === 'string'
      ? await loadHandlers(config.handlers)
      : (config.handlers ?? {});
  const allowExec = config.allowExec ?? [];
  const workDir = resolve(config.workDir ?? settingDefault('workDir'));
  const dataDir = resolve(config.dataDir ?? workDir);
  const builtins =
    allowExec.length > 0
      ? jobHandlers({
          coordinator: at.coordinator,
          world: at.world,
          allowExec,
          serverName: hostname(),
          workerId: at.nodeId,
          passEnv: config.passEnv ?? [],
          ...(config.runAs !== undefined ? { runAs: config.runAs } : {}),
          ...(config.jobCgroup !== undefined ? { jobCgroup: config.jobCgroup } : {}),
          workDir,
          dataDir,
          timeoutMs: config.jobTimeoutMs ?? settingDefault('jobTimeoutMs'),
          ...(config.killGraceMs !== undefined ? { killGraceMs: config.killGraceMs } : {}),
          ...(config.maxOutputBytes !== undefined
            ? { maxOutputBytes: config.maxOutputBytes, maxResultBytes: config.maxOutputBytes }
            : {}),
          engine: at.engine,
          logger: at.engineLog,
          processes: at.instruments.tracker,
        })
      : {};
  if (allowExec.length === 0)
    at.log.info(
      'no --allow-exec list: built-in job types (zoott.job, zoott.race, zoott.racer) are not served',
    );
  const all: Record<string, TaskHandler> = { ...builtins, ...custom };
  const types = config.types ?? Object.keys(all);
  for (const type of types)
    if (!all[type])
      throw new ZoottError(
        'INVALID_CONFIG',
        BUILTIN_TYPES.includes(type)
          ? `types: ${type} is a job type, served only with an --allow-exec list`
          : `types: no handler for ${type} (give --handlers with a function named ${type})`,
        { field: 'types' },
      );
  if (types.length === 0)
    throw new ZoottError(
      'INVALID_CONFIG',
      'nothing to serve: give --allow-exec for the job types and/or --handlers for custom types',
      { field: 'types' },
    );
  const handlers: Record<string, TaskHandler> = {};
  for (const type of types) handlers[type] = at.instruments.instrument(type, all[type]!);
  return { types, handlers, allowExec, workDir, dataDir };
}
