import { type Coordinator, type EngineLogger, ZoottError } from '@zoott/core';
import { SHARED_ACL, validateUserWorldName } from '@zoott/core/internal';
import { connectZk, ensureChroot } from '@zoott/zk-adapter';
import { type Logger, pino } from 'pino';
import { settingDefault } from './config.js';
import { credentialsOf } from './credentials.js';
import { aclFromSettings } from './daemon-access.js';
import { type DaemonSetup, serve } from './daemon-serve.js';
import type { WorkerDaemon, WorkerDaemonConfig } from './daemon-types.js';
import { entryEventsOption } from './entry-events.js';
import { containmentFor } from './jobs/containment.js';
import { jobUser } from './jobs/run-as.js';
import { zkSecurityOptions } from './zk-security.js';

export type { WorkerDaemon, WorkerDaemonConfig } from './daemon-types.js';

/** The daemon's pino logger: the given one, or JSON lines on stdout at `logLevel`. */
function daemonLogger(config: WorkerDaemonConfig, nodeId: string): Logger {
  return (
    config.logger ??
    pino({
      level: config.logLevel ?? settingDefault('logLevel'),
      base: { nodeId, pid: process.pid },
    })
  );
}

/** The engine's logger, writing through the daemon's. */
function engineLoggerOf(log: Logger): EngineLogger {
  // The task log tells these with world, type and attempt: the engine's own line would be a
  // second line for the same transition.
  const toldByTaskLog = new Set(['result dropped: fenced', 'result dropped: session lost']);
  return {
    debug: (f, m) => log.debug(f, m),
    info: (f, m) => log.info(f, m),
    warn: (f, m) => (toldByTaskLog.has(m) ? log.debug(f, m) : log.warn(f, m)),
    error: (f, m) => log.error(f, m),
  };
}

/** A count setting: an integer of at least 1, else INVALID_CONFIG naming it. */
function positive(value: number | undefined, fallback: number, field: string): number {
  const count = value ?? fallback;
  if (!Number.isInteger(count) || count < 1)
    throw new ZoottError('INVALID_CONFIG', `${field}: must be an integer >= 1, got ${count}`, {
      field,
    });
  return count;
}

/**
 * The cgroup the daemon's jobs go under, or why they have none (process groups then).
 *
 * @throws ZoottError INVALID_CONFIG under `require` when no cgroup can be made.
 */
function jobCgroupOf(config: WorkerDaemonConfig): string {
  const mode = config.jobCgroup ?? settingDefault('jobCgroup');
  const support = containmentFor(mode);
  if (support.ok) return support.root;
  if (mode === 'require')
    throw new ZoottError(
      'INVALID_CONFIG',
      `jobCgroup: require, but this worker cannot give jobs a cgroup: ${support.reason}. Run it as root or in a delegated cgroup v2 (systemd: Delegate=yes), or use --job-cgroup auto`,
      { field: 'jobCgroup' },
    );
  return `none (process groups: ${support.reason})`;
}

/**
 * Starts a worker daemon: connects (or uses the given coordinator), initialises the world,
 * and runs the worker loop over the built-in job types (when `allowExec` lists anything)
 * and the custom handlers, plus a loop for race coordinators in the race world. Session
 * handling is the core worker's: `suspended` claims nothing new, `lost` aborts running
 * handlers (their process groups are killed), drops their results, renews the session
 * and registers again.
 */
export async function startWorkerDaemon(config: WorkerDaemonConfig): Promise<WorkerDaemon> {
  const nodeId = config.nodeId ?? settingDefault('nodeId');
  const world = validateUserWorldName(config.world ?? settingDefault('world'));
  const log = daemonLogger(config, nodeId);
  const credentials = credentialsOf(config);
  const setup: Omit<DaemonSetup, 'coordinator' | 'owned'> = {
    config,
    nodeId,
    world,
    log,
    engineLog: engineLoggerOf(log),
    credentials,
    concurrency: positive(config.concurrency, settingDefault('concurrency'), 'concurrency'),
    raceConcurrency: positive(
      config.raceConcurrency,
      settingDefault('raceConcurrency'),
      'raceConcurrency',
    ),
    graceMs: config.graceMs ?? settingDefault('graceMs'),
    entryEvents: entryEventsOption(config.entryEvents),
  };

  // Whom jobs run as, and what holds their processes, are settled before connecting: a root
  // worker without --run-as refuses, and so does --job-cgroup require without a cgroup.
  if ((config.allowExec ?? []).length > 0) {
    jobUser(config.runAs);
    setup.jobCgroup = jobCgroupOf(config);
  }

  const owned = config.coordinator === undefined;
  const connect = config.connect ?? settingDefault('connect');
  // TLS and a SASL login, from the files the settings name.
  const security = zkSecurityOptions(config);
  const zkOptions = {
    ...(config.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: config.sessionTimeoutMs } : {}),
    ...security,
    auth: credentials,
    // A SASL login and a client certificate (ZooKeeper maps it to an x509 id) are credentials.
    defaultAcl: aclFromSettings(
      config.acl,
      credentials.length > 0 || security.sasl !== undefined || security.tls?.cert !== undefined,
    ),
  };
  if (owned) log.info({ connect, world }, 'connecting');
  // ZooKeeper does not create a chroot; a worker told to create its world creates it too,
  // shared (world:anyone cr) like the area nodes in it: no world's credentials lock it.
  if (owned && config.createWorld && config.connectFn === undefined)
    await ensureChroot(connect, { ...zkOptions, defaultAcl: SHARED_ACL });
  const coordinator: Coordinator =
    config.coordinator ?? (await (config.connectFn ?? connectZk)(connect, zkOptions));
  try {
    return await serve({ ...setup, coordinator, owned });
  } catch (err) {
    if (owned) await coordinator.close().catch(() => undefined);
    throw err;
  }
}
