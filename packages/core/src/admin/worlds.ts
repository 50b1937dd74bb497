import type { Coordinator } from '../contract/coordinator.js';
import { codeOf } from '../engine/errors.js';
import { AREA, areaParent } from '../engine/layout.js';
import { isInternalWorld, RESERVED_WORLD_NAMES } from '../tree/names.js';

/**
 * The user worlds initialised in this namespace (each has a pending area), sorted; zoott's
 * internal worlds (race coordination) are left out. A namespace without any is `[]`, also
 * when its chroot does not exist.
 */
export async function listWorlds(coordinator: Coordinator): Promise<string[]> {
  try {
    const names = await coordinator.children(areaParent(AREA.pending));
    return names.filter((n) => !RESERVED_WORLD_NAMES.includes(n) && !isInternalWorld(n)).sort();
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return [];
    throw err;
  }
}
