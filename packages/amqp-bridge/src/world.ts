import {
  type Acl,
  type Coordinator,
  createEngine,
  type Engine,
  isZoottError,
  type Telemetry,
  ZoottError,
} from '@zoott/core';
import { listWorlds, worldRoot } from '@zoott/core/internal';
import { RACE_WORLD_BUCKETS, raceWorld } from '@zoott/jobs';

/** The engines a bridge queues through, and the world's ACL (intake records carry it). */
export interface BridgeEngines {
  regular: Engine;
  race: Engine;
  acl: () => Promise<Acl[]>;
}

/**
 * Makes sure the world exists before the bridge consumes anything: a typo in `--world` must
 * not acknowledge jobs into a world no worker serves. With `createWorld`, a missing world is
 * initialised (as `zoott init` would, with the default settings).
 *
 * @throws ZoottError WORLD_NOT_INITIALISED naming the worlds that do exist.
 */
export async function openBridgeWorld(
  c: Coordinator,
  world: string,
  /** `createWorld`: initialise a missing world; `telemetry`: traces the jobs queued. */
  options: { createWorld?: boolean; telemetry?: Telemetry },
): Promise<BridgeEngines> {
  const traced = options.telemetry ? { telemetry: options.telemetry } : {};
  const regular = createEngine(c, { world, ...traced });
  try {
    await regular.context();
  } catch (err) {
    if (!isZoottError(err, 'WORLD_NOT_INITIALISED')) throw err;
    if (options.createWorld !== true) {
      const worlds = await listWorlds(c);
      throw new ZoottError(
        'WORLD_NOT_INITIALISED',
        `world ${world} was never initialised; ${
          worlds.length > 0
            ? `the worlds here are: ${worlds.join(', ')}`
            : 'there is no world here yet'
        } (create it with \`zoott init ${world}\`, or start the bridge with --create-world)`,
        { field: 'world' },
      );
    }
    await regular.init();
  }
  const race = createEngine(c, {
    world: raceWorld(world),
    buckets: RACE_WORLD_BUCKETS,
    ...traced,
  });
  return { regular, race, acl: async () => (await c.getAcl(worldRoot(world))).acl };
}
