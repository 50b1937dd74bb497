import { type Coordinator, isZoottError } from '@zoott/core';

/** Deletes a node and everything below it (deepest first); a missing node is fine. */
export async function deleteTree(c: Coordinator, path: string): Promise<void> {
  let children: string[];
  try {
    children = await c.children(path);
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return;
    throw err;
  }
  await Promise.all(children.map((name) => deleteTree(c, `${path}/${name}`)));
  try {
    await c.delete(path);
  } catch (err) {
    if (!isZoottError(err, 'NO_NODE')) throw err;
  }
}

/** Removes every node of a world: its tree and its part of each area and the registry. */
export async function wipeWorld(c: Coordinator, world: string): Promise<void> {
  await Promise.all(
    ['p', 'w', 'c', 'f', 'workers'].map((a) => deleteTree(c, `/zoott_${a}/${world}`)),
  );
  await deleteTree(c, `/zoott_${world}`);
}
