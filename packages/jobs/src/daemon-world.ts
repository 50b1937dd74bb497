import { existsSync } from 'node:fs';
import { isAbsolute, resolve, sep } from 'node:path';
import { type Engine, isZoottError, ZoottError } from '@zoott/core';
import { listWorlds } from '@zoott/core/internal';
import { moveLegacyReplies } from './legacy-replies.js';

// The world a daemon serves: made sure of before serving, and where its data files lie.

/**
 * Makes sure the world exists before the worker serves it: a typo in `--world` must not
 * create an empty world and idle there. With `create`, a missing world is initialised.
 * Then `init` runs (idempotent), and the world's results a zoott 0.1.0 worker published are
 * moved into its reply area.
 *
 * @throws ZoottError WORLD_NOT_INITIALISED naming the worlds that do exist.
 */
export async function openWorld(
  engine: Engine,
  create: boolean,
  log?: { info(fields: object, msg: string): void; warn(fields: object, msg: string): void },
): Promise<void> {
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
  // Idempotent: also creates buckets a half-finished init left out, and the nodes a world
  // made by zoott 0.1.0 lacks.
  await engine.init();
  // Results 0.1.0 workers published where every world shared them: moved into the world's
  // reply area, where this release's `wait` looks (docs/protocol.md, "Upgrading from 0.1.0").
  const legacy = await moveLegacyReplies(engine.coordinator, engine.world);
  if (legacy.moved.length > 0 || legacy.removed.length > 0)
    log?.info(
      { moved: legacy.moved.length, removedDirs: legacy.removed },
      'moved results of zoott 0.1.0 into the reply area of the world',
    );
  for (const left of legacy.left) log?.warn(left, 'a result of zoott 0.1.0 was not moved');
}

/** Locality: whether a `filename` hint names a file in the data directory. */
export function fileHere(dataDir: string): (filename: string) => boolean {
  const root = resolve(dataDir);
  return (filename) => {
    if (isAbsolute(filename)) return false;
    const full = resolve(root, filename);
    return full.startsWith(root + sep) && existsSync(full);
  };
}
