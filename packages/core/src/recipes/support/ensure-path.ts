import type { Coordinator } from '../../contract/coordinator.js';
import { isZoottError } from '../../contract/errors.js';

/**
 * Creates every missing node of `path` (persistent, empty, default ACL), like kazoo's
 * makepath. It starts at `path` itself and goes up only past missing nodes, so a node that
 * exists is never created again: ZooKeeper checks a create against its parent's ACL before
 * it looks for the node, and a parent that refuses strangers would fail even a create of a
 * node that is already there.
 */
export async function ensurePath(zk: Coordinator, path: string): Promise<void> {
  if (path === '/' || path === '') return;
  try {
    await zk.create(path);
    return;
  } catch (err) {
    if (isZoottError(err, 'NODE_EXISTS')) return;
    if (!isZoottError(err, 'NO_NODE')) throw err;
  }
  await ensurePath(zk, path.slice(0, path.lastIndexOf('/')));
  try {
    await zk.create(path);
  } catch (err) {
    if (!isZoottError(err, 'NODE_EXISTS')) throw err;
  }
}
