import type { Coordinator } from '../../contract/coordinator.js';
import { isZoottError } from '../../contract/errors.js';
import { joinPath } from '../../contract/paths.js';

/**
 * Deletes a node and everything below it, deepest first (ZooKeeper's `deleteall`). Siblings
 * go in parallel. Nodes that vanish meanwhile are fine; a node that gains a child while it is
 * being deleted fails with NOT_EMPTY, because this is no transaction: stop writers first.
 */
export async function deleteTree(coordinator: Coordinator, path: string): Promise<void> {
  let children: string[];
  try {
    children = await coordinator.children(path);
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return;
    throw err;
  }
  await Promise.all(children.map((name) => deleteTree(coordinator, joinPath(path, name))));
  try {
    await coordinator.delete(path);
  } catch (err) {
    if (!isZoottError(err, 'NO_NODE')) throw err;
  }
}
