import { randomBytes } from 'node:crypto';
import {
  type Coordinator,
  createEngine,
  type Engine,
  type EngineOptions,
  isZoottError,
  type PlacementHints,
  type QueueOptions,
  type TaskKey,
} from '@zoott/core';
import {
  type RaceJob,
  type RegularJob,
  validateRaceJob,
  validateRegularJob,
} from '@zoott/core/jobs';
import { JOB_TYPE, RACE_TYPE, RACE_WORLD_BUCKETS, raceWorld } from './constants.js';
import { replySegments } from './reply.js';

/** Options of {@link submitJob} and {@link submitRace}. */
export interface SubmitOptions {
  /** The world the workers serve. */
  world: string;
  /** Task name (default `job-<time>-<random>` / `race-<time>-<random>`). */
  name?: string;
  priority?: number;
  /** Attempts before the task is dead-lettered (default 3). */
  maxAttempts?: number;
  /** Options for the engine that is created for the world (logger, clock, ...). */
  engineOptions?: Omit<EngineOptions, 'world'>;
  /**
   * Initialise the world when it does not exist (default true). False: a missing world is
   * WORLD_NOT_INITIALISED, for callers that must not create a world a typo named.
   */
  createWorld?: boolean;
  /**
   * The engine to queue through (of `world`, or for a race of its race world), kept by a
   * caller that queues many jobs; default: one made for the call.
   */
  engine?: Engine;
}

/** What was queued. */
export interface SubmittedJob {
  world: string;
  key: TaskKey;
  name: string;
}

function defaultName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** Queues a task, initialising the world first when it does not exist yet (and `create`). */
async function queueInto(
  engine: Engine,
  task: { name: string; type: string; data: unknown },
  options: QueueOptions,
  create = true,
): Promise<TaskKey> {
  try {
    const [queued] = await engine.queue(task, null, null, options);
    return queued!.key;
  } catch (err) {
    if (!isZoottError(err, 'WORLD_NOT_INITIALISED') || !create) throw err;
    await engine.init();
    const [queued] = await engine.queue(task, null, null, options);
    return queued!.key;
  }
}

function queueOptions(options: SubmitOptions, hints?: PlacementHints): QueueOptions {
  const queued: QueueOptions = {};
  if (options.priority !== undefined) queued.priority = options.priority;
  if (options.maxAttempts !== undefined) queued.maxAttempts = options.maxAttempts;
  if (hints && Object.keys(hints).length > 0) queued.hints = hints;
  return queued;
}

/**
 * Validates a regular job (Yothalot JSON) and queues it as a top-level task of type
 * `zoott.job` in `options.world`. Its `server`, `filename` and `dataset` hints become the task's
 * placement hints. The result lands in the completed record and, with a routing key, in
 * the reply channel (see {@link waitForResult}).
 *
 * @throws ZoottError INVALID_JOB naming the field when the job is invalid.
 */
export async function submitJob(
  coordinator: Coordinator,
  job: unknown,
  options: SubmitOptions,
): Promise<SubmittedJob> {
  const valid: RegularJob = validateRegularJob(job);
  if (valid.routingkey !== undefined)
    replySegments({ exchange: valid.exchange, routingkey: valid.routingkey });
  const hints: PlacementHints = {};
  if (valid.server !== undefined) hints.server = valid.server;
  if (valid.filename !== undefined) hints.filename = valid.filename;
  if (valid.dataset !== undefined) hints.dataset = valid.dataset;
  const name = options.name ?? defaultName('job');
  const engine =
    options.engine ?? createEngine(coordinator, { ...options.engineOptions, world: options.world });
  const key = await queueInto(
    engine,
    { name, type: JOB_TYPE, data: valid },
    queueOptions(options, hints),
    options.createWorld,
  );
  return { world: options.world, key, name };
}

/**
 * Validates a race job and queues its coordinator task (type `zoott.race`) in the race
 * world of `options.world` (`<world>~races`); the coordinator queues one `zoott.racer`
 * task per input in `options.world`. See docs/protocol.md, "Jobs".
 *
 * @throws ZoottError INVALID_JOB naming the field when the job is invalid.
 */
export async function submitRace(
  coordinator: Coordinator,
  job: unknown,
  options: SubmitOptions,
): Promise<SubmittedJob> {
  const valid: RaceJob = validateRaceJob(job);
  if (valid.routingkey !== undefined)
    replySegments({ exchange: valid.exchange, routingkey: valid.routingkey });
  const name = options.name ?? defaultName('race');
  const world = raceWorld(options.world);
  const engine =
    options.engine ??
    createEngine(coordinator, {
      ...options.engineOptions,
      world,
      buckets: RACE_WORLD_BUCKETS,
    });
  const key = await queueInto(
    engine,
    { name, type: RACE_TYPE, data: valid },
    queueOptions(options),
  );
  return { world, key, name };
}
