import { hostname } from 'node:os';
import {
  type Coordinator,
  type Engine,
  type EngineLogger,
  runWorker,
  type WorkerHandle,
  type WorkerOptions,
} from '@zoott/core';
import type { Logger } from 'pino';
import { RACE_TYPE, RACE_WORLD_BUCKETS, raceWorld } from './constants.js';
import type { Credential } from './credentials.js';
import { type ServedHandlers, servedHandlers } from './daemon-handlers.js';
import { DaemonInstruments } from './daemon-instruments.js';
import type { WorkerDaemon, WorkerDaemonConfig } from './daemon-types.js';
import { fileHere, openWorld } from './daemon-world.js';
import { ExpiryKill } from './expiry-kill.js';
import { withRaceInputCleanup } from './handlers/race-input.js';
import { HealthWatch } from './health.js';
import { createJobEngine } from './job-engine.js';
import { killAllJobs, killJobsUnheard } from './jobs/containment.js';
import { keeperLink } from './jobs/keeper-link.js';
import { type MetricsServer, serveMetrics } from './metrics.js';
import { ReplyResultsRetention } from './reply-retention.js';
import { WorldCounts } from './world-counts.js';

/** Everything `startWorkerDaemon` settled before serving: checked settings and the session. */
export interface DaemonSetup {
  config: WorkerDaemonConfig;
  nodeId: string;
  world: string;
  log: Logger;
  engineLog: EngineLogger;
  credentials: Credential[];
  concurrency: number;
  raceConcurrency: number;
  graceMs: number;
  /** runWorker's `entryEvents`, from the `--entry-events` mode. */
  entryEvents: NonNullable<WorkerOptions['entryEvents']>;
  coordinator: Coordinator;
  /** Whether the daemon opened the session (and so closes it). */
  owned: boolean;
  /** The cgroup job processes go under, or why none (when the job types are served). */
  jobCgroup?: string;
}

/** Serves the world on the session: the worker loops, session logging and the metrics. */
export async function serve(setup: DaemonSetup): Promise<WorkerDaemon> {
  const { config, coordinator, world, log, engineLog } = setup;
  if (!setup.owned)
    for (const credential of setup.credentials)
      await coordinator.addAuth(credential.scheme, credential.auth);

  const instruments = new DaemonInstruments(log, setup.nodeId, world);
  const { metrics } = instruments;
  metrics.setSession(coordinator.state);
  const traced = config.telemetry ? { telemetry: config.telemetry } : {};
  if (config.trace && !config.telemetry)
    log.warn('trace is set but no telemetry was given: the program that starts the SDK passes it');
  const engine: Engine = createJobEngine(coordinator, {
    world,
    logger: engineLog,
    onSettled: instruments.settledIn(() => engine),
    ...traced,
  });
  const raceEngine: Engine = createJobEngine(coordinator, {
    ...traced,
    world: raceWorld(world),
    buckets: RACE_WORLD_BUCKETS,
    logger: engineLog,
    onSettled: withRaceInputCleanup(
      instruments.settledIn(() => raceEngine),
      () => served.dataDir,
      log,
    ),
    replyWorld: world,
  });
  const served = await servedHandlers(config, { ...setup, engine, instruments });

  await openWorld(engine, config.createWorld === true, log);
  const loops = await startLoops(setup, served, engine, raceEngine);

  const offSession = coordinator.onSession((event) => {
    metrics.setSession(coordinator.state);
    const level = event.type === 'lost' || event.type === 'suspended' ? 'warn' : 'info';
    log[level]({ event: event.type, sessionId: coordinator.sessionId }, `session ${event.type}`);
  });

  // A job's processes end before the server could expire the session and hand its claim on.
  const expiryKill = new ExpiryKill(coordinator, {
    kill(silentMs) {
      // Logged for the jobs it kills (a silence kills again every 100 ms: only new ones count).
      const killed = killJobsUnheard(silentMs);
      if (killed > 0)
        log.warn(
          { silentMs, killed, sessionTimeoutMs: coordinator.sessionTimeoutMs },
          'ZooKeeper silent too long: jobs killed before the session could expire',
        );
    },
  });
  // The keeper kills at the same deadline on its own clock, often first: said too.
  const offUnheard = keeperLink().onUnheard((silentMs) =>
    log.warn(
      { silentMs, sessionTimeoutMs: coordinator.sessionTimeoutMs },
      'ZooKeeper silent too long: the job keeper killed a job at its deadline, before the session could expire',
    ),
  );
  const health = new HealthWatch(coordinator, () => loops[0]!.registryPath !== null);
  const counts = new WorldCounts(engine, metrics, world, () => coordinator.state === 'connected');
  const metricsServer =
    config.metricsPort !== undefined
      ? await serveMetrics(metrics, config.metricsPort, config.metricsHost ?? '127.0.0.1', {
          refresh: () => counts.refresh(),
          collect: () => {
            metrics.setHealth(health.health());
            counts.collect();
          },
          health: () => health.health(),
        })
      : null;

  log.info(
    {
      world,
      types: served.types,
      concurrency: setup.concurrency,
      allowExec: served.allowExec,
      workDir: served.workDir,
      dataDir: served.dataDir,
      ...(setup.jobCgroup !== undefined ? { jobCgroup: setup.jobCgroup } : {}),
      metrics: metricsServer?.url ?? null,
    },
    'worker started',
  );

  const finish = async () => {
    offSession();
    offUnheard();
    expiryKill.close();
    health.close();
    await metricsServer?.close();
    engine.close();
    raceEngine.close();
    if (setup.owned) await coordinator.close().catch(() => undefined);
  };
  return daemonHandle(setup, loops, instruments, metricsServer, served.types, finish);
}

/** The main worker loop, and one for race coordinators in the race world when served. */
async function startLoops(
  setup: DaemonSetup,
  { types, handlers, dataDir }: ServedHandlers,
  engine: Engine,
  raceEngine: Engine,
): Promise<WorkerHandle[]> {
  const common = {
    id: setup.nodeId,
    server: setup.nodeId,
    host: hostname(),
    pid: process.pid,
    stopTimeoutMs: setup.graceMs,
    logger: setup.engineLog,
    // Both loops: the race world's buckets are as much a server's burden as the world's.
    entryEvents: setup.entryEvents,
    ...(setup.config.localityWaitMs !== undefined
      ? { localityWaitMs: setup.config.localityWaitMs }
      : {}),
  };
  const loops: WorkerHandle[] = [
    runWorker(setup.coordinator, handlers, {
      ...common,
      world: setup.world,
      concurrency: setup.concurrency,
      engine,
      hasFile: fileHere(dataDir),
      ...(setup.config.datasets !== undefined ? { datasets: setup.config.datasets } : {}),
      // The world's elected reaper also removes the reply results nobody consumed.
      retention: {
        tasks: [new ReplyResultsRetention(setup.coordinator, setup.world, () => Date.now())],
      },
    }),
  ];
  if (types.includes(RACE_TYPE)) {
    await raceEngine.init();
    loops.push(
      runWorker(
        setup.coordinator,
        { [RACE_TYPE]: handlers[RACE_TYPE]! },
        // The main loop renews a lost session; this one follows it.
        {
          ...common,
          world: raceWorld(setup.world),
          concurrency: setup.raceConcurrency,
          engine: raceEngine,
          renewSession: false,
          // Schedules belong to the served world; the race world has none to tick.
          scheduler: false,
        },
      ),
    );
  }
  return loops;
}

/** The running daemon: `stop` lets running tasks finish, `kill` ends their processes at once. */
function daemonHandle(
  setup: DaemonSetup,
  loops: WorkerHandle[],
  instruments: DaemonInstruments,
  metricsServer: MetricsServer | null,
  types: string[],
  finish: () => Promise<void>,
): WorkerDaemon {
  const { log } = setup;
  const { processes } = instruments;
  const main = loops[0]!;
  let shutdown: Promise<void> | null = null;
  const done = Promise.all(loops.map((l) => l.done)).then(() => undefined);
  // A loop that ends on its own (the session was closed under it) ends the daemon.
  void done.then(
    () => {
      shutdown ??= finish();
    },
    (err: unknown) => log.error({ err: String(err) }, 'worker loop failed'),
  );
  return {
    nodeId: setup.nodeId,
    world: setup.world,
    types,
    coordinator: setup.coordinator,
    metrics: instruments.metrics,
    metricsServer,
    get registryPath() {
      return main.registryPath;
    },
    processes,
    stop() {
      shutdown ??= (async () => {
        log.info({ graceMs: setup.graceMs, running: processes.size }, 'stopping: no new claims');
        await Promise.all(loops.map((l) => l.stop()));
        await finish();
        log.info('stopped');
      })();
      return shutdown;
    },
    async kill() {
      killAllJobs();
      for (const pid of processes) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      log.warn({ killed: processes.size }, 'killed');
      for (const loop of loops) void loop.stop();
      shutdown ??= finish();
      await shutdown;
    },
    done: done.then(() => shutdown ?? undefined),
  };
}
