import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { isAbsolute, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type Acl,
  type Coordinator,
  CREATOR_ALL_ACL,
  digestAcl,
  type EngineLogger,
  type Handlers,
  isZoottError,
  type LocalityScore,
  OPEN_ACL,
  runWorker,
  type TaskHandler,
  type WorkerHandle,
  ZoottError,
} from '@zoott/core';
import { listWorlds, validateUserWorldName } from '@zoott/core/internal';
import { connectZk, ensureChroot } from '@zoott/zk-adapter';
import { type Logger, pino } from 'pino';
import { type FileSettings, settingDefault } from './config.js';
import { type Credential, parseCredential, readAuthFile } from './config-file.js';
import { BUILTIN_TYPES, RACE_TYPE, RACE_WORLD_BUCKETS, raceWorld } from './constants.js';
import { jobHandlers } from './handlers/index.js';
import { withRaceInputCleanup } from './handlers/race-input.js';
import { JobEngine, type SettleListener } from './job-engine.js';
import { jobUser } from './jobs/run-as.js';
import { healthOf, type MetricsServer, serveMetrics, WorkerMetrics } from './metrics.js';
import { TaskLog } from './task-log.js';

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

/** Credentials of the settings: `auth` entries, then the lines of `authFile`. */
export function credentialsOf(config: Pick<FileSettings, 'auth' | 'authFile'>): Credential[] {
  return [
    ...(config.auth ?? []).map((a, i) => parseCredential(a, `auth[${i}]`)),
    ...(config.authFile !== undefined ? readAuthFile(config.authFile) : []),
  ];
}

/**
 * The ACL of the nodes this worker creates (claims, records, retry entries, replies). With
 * credentials and no explicit list it is the `auth` scheme, i.e. exactly the identities the
 * session authenticated as: a locked-down world stays locked when a worker writes to it.
 */
export function aclFromSettings(
  acl: readonly string[] | undefined,
  authenticated: boolean,
): readonly Acl[] {
  if (acl === undefined || acl.length === 0) return authenticated ? CREATOR_ALL_ACL : OPEN_ACL;
  if (acl.length === 1 && acl[0] === 'open') return OPEN_ACL;
  return acl.map((entry, i) => {
    const parts = entry.split(':');
    const perms = parts.pop() ?? '';
    const [user, password] = [parts[0] ?? '', parts.slice(1).join(':')];
    if (parts.length < 2 || user === '' || password === '')
      throw new ZoottError(
        'INVALID_CONFIG',
        `acl[${i}]: expected user:password:perms, e.g. alice:secret:cdrwa`,
        {
          field: `acl[${i}]`,
        },
      );
    return digestAcl(user, password, perms);
  });
}

/** Loads a handlers module: its function exports (named, or a default object of them). */
export async function loadHandlers(path: string): Promise<Handlers> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (err) {
    throw new ZoottError(
      'INVALID_CONFIG',
      `handlers: cannot load ${path} (${(err as Error).message})`,
      { field: 'handlers', cause: err },
    );
  }
  const out: Record<string, TaskHandler> = {};
  const def = mod.default;
  if (typeof def === 'object' && def !== null)
    for (const [k, v] of Object.entries(def))
      if (typeof v === 'function') out[k] = v as TaskHandler;
  for (const [k, v] of Object.entries(mod))
    if (k !== 'default' && typeof v === 'function') out[k] = v as TaskHandler;
  if (Object.keys(out).length === 0)
    throw new ZoottError('INVALID_CONFIG', `handlers: ${path} exports no function`, {
      field: 'handlers',
    });
  return out;
}

/**
 * Makes sure the world exists before the worker serves it: a typo in `--world` must not
 * create an empty world and idle there. With `create`, a missing world is initialised.
 *
 * @throws ZoottError WORLD_NOT_INITIALISED naming the worlds that do exist.
 */
async function openWorld(engine: JobEngine, create: boolean): Promise<void> {
  try {
    await engine.context();
  } catch (err) {
    if (!isZoottError(err, 'WORLD_NOT_INITIALISED')) throw err;
    if (!create) {
      const worlds = await listWorlds(engine.coordinator);
      throw new ZoottError(
        'WORLD_NOT_INITIALISED',
        `world ${engine.world} was never initialised; ${
          worlds.length > 0
            ? `the worlds here are: ${worlds.join(', ')}`
            : 'there is no world here yet'
        } (create it with \`zoott init ${engine.world}\`, or start the worker with --create-world)`,
        { field: 'world' },
      );
    }
  }
  // Idempotent: also creates buckets a half-finished init left out.
  await engine.init();
}

/** Locality: +2 for a task whose `filename` hint names a file in the data directory. */
function fileLocality(dataDir: string): LocalityScore {
  const root = resolve(dataDir);
  return (task) => {
    const f = task.hints?.filename;
    if (f === undefined || isAbsolute(f)) return 0;
    const full = resolve(root, f);
    return full.startsWith(root + sep) && existsSync(full) ? 2 : 0;
  };
}

function positive(value: number | undefined, fallback: number, field: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1)
    throw new ZoottError('INVALID_CONFIG', `${field}: must be an integer >= 1, got ${v}`, {
      field,
    });
  return v;
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
  const log: Logger =
    config.logger ??
    pino({
      level: config.logLevel ?? settingDefault('logLevel'),
      base: { nodeId, pid: process.pid },
    });
  // The task log tells these with world, type and attempt: the engine's own line would be a
  // second line for the same transition.
  const toldByTaskLog = new Set(['result dropped: fenced', 'result dropped: session lost']);
  const engineLog: EngineLogger = {
    debug: (f, m) => log.debug(f, m),
    info: (f, m) => log.info(f, m),
    warn: (f, m) => (toldByTaskLog.has(m) ? log.debug(f, m) : log.warn(f, m)),
    error: (f, m) => log.error(f, m),
  };
  const concurrency = positive(config.concurrency, settingDefault('concurrency'), 'concurrency');
  const raceConcurrency = positive(
    config.raceConcurrency,
    settingDefault('raceConcurrency'),
    'raceConcurrency',
  );
  const graceMs = config.graceMs ?? settingDefault('graceMs');
  const credentials = credentialsOf(config);

  // Whom jobs run as is settled before connecting: a root worker without --run-as refuses.
  if ((config.allowExec ?? []).length > 0) jobUser(config.runAs);

  const owned = config.coordinator === undefined;
  const connect = config.connect ?? settingDefault('connect');
  const zkOptions = {
    ...(config.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: config.sessionTimeoutMs } : {}),
    auth: credentials,
    defaultAcl: aclFromSettings(config.acl, credentials.length > 0),
  };
  if (owned) log.info({ connect, world }, 'connecting');
  // ZooKeeper does not create a chroot; a worker told to create its world creates it too.
  if (owned && config.createWorld && config.connectFn === undefined)
    await ensureChroot(connect, zkOptions);
  const coordinator =
    config.coordinator ?? (await (config.connectFn ?? connectZk)(connect, zkOptions));
  try {
    return await startOn(coordinator, owned, credentials);
  } catch (err) {
    if (owned) await coordinator.close().catch(() => undefined);
    throw err;
  }

  async function startOn(
    coordinator: Coordinator,
    owned: boolean,
    credentials: Credential[],
  ): Promise<WorkerDaemon> {
    if (!owned) for (const a of credentials) await coordinator.addAuth(a.scheme, a.auth);

    const metrics = new WorkerMetrics();
    metrics.setSession(coordinator.state);
    const processes = new Set<number>();
    const tracker = {
      started(pid: number) {
        metrics.processesStarted.inc();
        processes.add(pid);
        metrics.processes.set(processes.size);
      },
      ended(pid: number) {
        processes.delete(pid);
        metrics.processes.set(processes.size);
      },
    };
    const taskLog = new TaskLog(log, nodeId);
    const onSettledIn =
      (engine: () => JobEngine): SettleListener =>
      (claim, outcome, error) => {
        const labels = { type: claim.type };
        if (outcome.status === 'completed') metrics.completed.inc(labels);
        else if (outcome.status === 'retrying') metrics.retried.inc(labels);
        else if (outcome.status === 'failed') metrics.failed.inc(labels);
        // A claim given back on stop is not a lost result.
        else if (outcome.status === 'dropped' && outcome.reason !== 'released')
          metrics.dropped.inc(labels);
        void taskLog.settled(engine(), claim, outcome, error);
      };
    const engine: JobEngine = new JobEngine(coordinator, {
      world,
      logger: engineLog,
      onSettled: onSettledIn(() => engine),
    });
    const raceEngine: JobEngine = new JobEngine(coordinator, {
      world: raceWorld(world),
      buckets: RACE_WORLD_BUCKETS,
      logger: engineLog,
      onSettled: withRaceInputCleanup(
        onSettledIn(() => raceEngine),
        () => resolve(config.dataDir ?? config.workDir ?? settingDefault('workDir')),
        log,
      ),
      replyWorld: world,
    });

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
            coordinator,
            world,
            allowExec,
            serverName: hostname(),
            workerId: nodeId,
            passEnv: config.passEnv ?? [],
            ...(config.runAs !== undefined ? { runAs: config.runAs } : {}),
            workDir,
            dataDir,
            timeoutMs: config.jobTimeoutMs ?? settingDefault('jobTimeoutMs'),
            ...(config.killGraceMs !== undefined ? { killGraceMs: config.killGraceMs } : {}),
            ...(config.maxOutputBytes !== undefined
              ? { maxOutputBytes: config.maxOutputBytes, maxResultBytes: config.maxOutputBytes }
              : {}),
            engine,
            logger: engineLog,
            processes: tracker,
          })
        : {};
    if (allowExec.length === 0)
      log.info(
        'no --allow-exec list: built-in job types (zoott.job, zoott.race, zoott.racer) are not served',
      );
    const all: Record<string, TaskHandler> = { ...builtins, ...custom };
    const wanted = config.types ?? Object.keys(all);
    for (const t of wanted)
      if (!all[t])
        throw new ZoottError(
          'INVALID_CONFIG',
          BUILTIN_TYPES.includes(t)
            ? `types: ${t} is a job type, served only with an --allow-exec list`
            : `types: no handler for ${t} (give --handlers with a function named ${t})`,
          { field: 'types' },
        );
    if (wanted.length === 0)
      throw new ZoottError(
        'INVALID_CONFIG',
        'nothing to serve: give --allow-exec for the job types and/or --handlers for custom types',
        { field: 'types' },
      );

    const instrument =
      (type: string, handler: TaskHandler): TaskHandler =>
      async (task) => {
        // Race coordinators run in the race world; every other type in the served world.
        taskLog.started(type === RACE_TYPE ? raceWorld(world) : world, task);
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
    const mainHandlers: Record<string, TaskHandler> = {};
    for (const t of wanted) mainHandlers[t] = instrument(t, all[t]!);

    await openWorld(engine, config.createWorld === true);
    const common = {
      id: nodeId,
      server: nodeId,
      host: hostname(),
      pid: process.pid,
      stopTimeoutMs: graceMs,
      logger: engineLog,
      ...(config.localityWaitMs !== undefined ? { localityWaitMs: config.localityWaitMs } : {}),
    };
    const loops: WorkerHandle[] = [];
    const main = runWorker(coordinator, mainHandlers, {
      ...common,
      world,
      concurrency,
      engine,
      locality: fileLocality(dataDir),
    });
    loops.push(main);
    if (wanted.includes(RACE_TYPE)) {
      await raceEngine.init();
      loops.push(
        runWorker(
          coordinator,
          { [RACE_TYPE]: mainHandlers[RACE_TYPE]! },
          // The main loop renews a lost session; this one follows it.
          {
            ...common,
            world: raceWorld(world),
            concurrency: raceConcurrency,
            engine: raceEngine,
            renewSession: false,
          },
        ),
      );
    }

    const offSession = coordinator.onSession((e) => {
      metrics.setSession(coordinator.state);
      const level = e.type === 'lost' || e.type === 'suspended' ? 'warn' : 'info';
      log[level]({ event: e.type, sessionId: coordinator.sessionId }, `session ${e.type}`);
    });

    const metricsServer =
      config.metricsPort !== undefined
        ? await serveMetrics(
            metrics,
            config.metricsPort,
            config.metricsHost ?? '127.0.0.1',
            async () => {
              metrics.setSession(coordinator.state);
              metrics.setCounts(world, await engine.counts());
            },
            () => healthOf(coordinator.state),
          )
        : null;

    log.info(
      {
        world,
        types: wanted,
        concurrency,
        allowExec,
        workDir,
        dataDir,
        metrics: metricsServer?.url ?? null,
      },
      'worker started',
    );

    let shutdown: Promise<void> | null = null;
    const finish = async () => {
      offSession();
      await metricsServer?.close();
      engine.close();
      raceEngine.close();
      if (owned) await coordinator.close().catch(() => undefined);
    };
    const done = Promise.all(loops.map((l) => l.done)).then(() => undefined);
    // A loop that ends on its own (the session was closed under it) ends the daemon.
    void done.then(
      () => {
        shutdown ??= finish();
      },
      (err: unknown) => log.error({ err: String(err) }, 'worker loop failed'),
    );

    return {
      nodeId,
      world,
      types: wanted,
      coordinator,
      metrics,
      metricsServer,
      get registryPath() {
        return main.registryPath;
      },
      processes,
      stop() {
        shutdown ??= (async () => {
          log.info({ graceMs, running: processes.size }, 'stopping: no new claims');
          await Promise.all(loops.map((l) => l.stop()));
          await finish();
          log.info('stopped');
        })();
        return shutdown;
      },
      async kill() {
        for (const pid of processes) {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        log.warn({ killed: processes.size }, 'killed');
        for (const l of loops) void l.stop();
        shutdown ??= finish();
        await shutdown;
      },
      done: done.then(() => shutdown ?? undefined),
    };
  }
}
