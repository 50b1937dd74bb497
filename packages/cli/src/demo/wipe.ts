import type { Coordinator } from '@zoott/core';
import { deleteTree } from '@zoott/core/recipes';

/** Removes every node of a world: its tree and its part of each area and the registry. */
export async function wipeWorld(c: Coordinator, world: string): Promise<void> {
  await Promise.all(
    ['p', 'w', 'c', 'f', 'workers'].map((a) => deleteTree(c, `/zoott_${a}/${world}`)),
  );
  await deleteTree(c, `/zoott_${world}`);
}
