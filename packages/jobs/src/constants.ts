import { internalWorldName } from '@zoott/core/internal';

/** Task type of a regular JSON job (one process). */
export const JOB_TYPE = 'zoott.job';
/** Task type of a race job: the race's coordinator, which queues one racer per input. */
export const RACE_TYPE = 'zoott.race';
/** Task type of one racer of a race (queued by the race's coordinator, never by producers). */
export const RACER_TYPE = 'zoott.racer';
/** The built-in job types, in the order a worker registers them. */
export const BUILTIN_TYPES: readonly string[] = [JOB_TYPE, RACE_TYPE, RACER_TYPE];

/** Root of the reply channel and race state (see docs/protocol.md, "Jobs"). */
export const REPLY_ROOT = '/zoott_r';
/** Where races keep their shared state: `/zoott_r/races/<race>`. */
export const RACES_ROOT = `${REPLY_ROOT}/races`;
/** Exchange segment used when a job names a routing key but no exchange (AMQP's default ""). */
export const DEFAULT_EXCHANGE = '_default';

/**
 * Race coordinators run in their own world so they never take a slot a racer needs. It is
 * an internal world (`<world>~races`): hidden from listings, and no user world can be named
 * like it.
 */
export function raceWorld(world: string): string {
  return internalWorldName(world, 'races');
}

/** Buckets of a race world: races are few, so a small world is enough. */
export const RACE_WORLD_BUCKETS = 8;
