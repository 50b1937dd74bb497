import { AREA_NAMES, areaParent, internalWorldName, validateWorldName } from '@zoott/core/internal';

/** Task type of a regular JSON job (one process). */
export const JOB_TYPE = 'zoott.job';
/** Task type of a race job: the race's coordinator, which queues one racer per input. */
export const RACE_TYPE = 'zoott.race';
/** Task type of one racer of a race (queued by the race's coordinator, never by producers). */
export const RACER_TYPE = 'zoott.racer';
/** The built-in job types, in the order a worker registers them. */
export const BUILTIN_TYPES: readonly string[] = [JOB_TYPE, RACE_TYPE, RACER_TYPE];

/**
 * The reply area, `/zoott_~replies/<world>/<exchange>/<routingkey>/result-<seq>` (see
 * docs/protocol.md, "Jobs"): each world publishes under its own node, made by `init` with
 * the world's ACL, so no world's reply paths depend on a node another world made.
 */
export const REPLY_ROOT = areaParent(AREA_NAMES.replies);
/** Where races keep their shared state: `/zoott_~races/<world>/<race>`. */
export const RACES_ROOT = areaParent(AREA_NAMES.races);

/** A world's node in the reply area: its exchanges are below it. */
export function replyRoot(world: string): string {
  return `${REPLY_ROOT}/${validateWorldName(world)}`;
}

/** A world's node in the race area: the state of its running races is below it. */
export function racesRoot(world: string): string {
  return `${RACES_ROOT}/${validateWorldName(world)}`;
}

/**
 * Reply paths and race state as zoott 0.1.0 kept them, shared by every world
 * (`/zoott_r/<exchange>/<routingkey>`, `/zoott_r/races/<race>`): read only to move a world's
 * results into its reply area, never written.
 */
export const LEGACY_REPLY_ROOT = areaParent(AREA_NAMES.legacyReplies);
/** zoott 0.1.0's race state, `/zoott_r/races/<race>`. */
export const LEGACY_RACES_ROOT = `${LEGACY_REPLY_ROOT}/races`;
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
