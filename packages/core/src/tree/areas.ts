/**
 * The areas of a namespace, by role: each is `/zoott_<name>`, beside the worlds' tree roots
 * `/zoott_<world>`, and holds one node per world (`/zoott_<name>/<world>`). This one list is
 * what the world-name check refuses (a world named like an area would have its tree root on
 * top of that area), what the layout builds paths from, and what docs/protocol.md lists (a
 * test holds it to this list). The names are stored on ZooKeeper, so they never change.
 *
 * Areas added after zoott 0.1.0 start with `~`: a user's world name cannot contain it, and an
 * internal world's (`<world>~races`) has its world's name before it, so a new area never
 * takes the name of a world that exists already.
 */
export const AREA_NAMES = Object.freeze({
  /** Entries of tasks waiting to run (queued, retrying, dead). */
  pending: 'p',
  /** Ephemeral claims of tasks running now. */
  working: 'w',
  /** Records of completed tasks. */
  completed: 'c',
  /** Records of tasks that failed for good. */
  failed: 'f',
  /** Progress and log lines of running tasks. */
  progress: 'g',
  /** Nodes `zoott doctor --repair` moved away. */
  quarantine: 'q',
  /** Live workers (ephemeral registrations). */
  registry: 'workers',
  /** Cron schedules. */
  schedules: 'schedules',
  /** Elections (the world's one scheduler). */
  leaders: 'leaders',
  /** Rate limits per task type. */
  limits: 'limits',
  /** Job results on reply paths: `<world>/<exchange>/<routingkey>/result-<seq>`. */
  replies: '~replies',
  /** Shared state of running races. */
  races: '~races',
  /**
   * Results the AMQP bridge could not publish (an exchange refused or missing, no queue
   * bound): `<world>/<result>`, until an operator retries or drops them (`zoott parked`).
   */
  parked: '~parked',
  /**
   * Reply paths and race state as zoott 0.1.0 kept them, shared by every world
   * (`/zoott_r/<exchange>/<routingkey>`, `/zoott_r/races/<race>`): read only to move a
   * world's results into `replies` (`zoott init`), never written.
   */
  legacyReplies: 'r',
} as const);

export type AreaRole = keyof typeof AREA_NAMES;
export type AreaName = (typeof AREA_NAMES)[AreaRole];

/** The areas in which `init` makes a node for its world: every area but the legacy one. */
export const WORLD_AREAS: readonly AreaName[] = Object.freeze(
  (Object.keys(AREA_NAMES) as AreaRole[])
    .filter((role) => role !== 'legacyReplies')
    .map((role) => AREA_NAMES[role]),
);

/**
 * World names that would make `/zoott_<world>` one of the areas: every area's name. Derived
 * from {@link AREA_NAMES}, so an area added there is reserved here too.
 */
export const RESERVED_WORLD_NAMES: readonly string[] = Object.freeze(Object.values(AREA_NAMES));
