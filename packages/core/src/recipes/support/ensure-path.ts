import type { Coordinator } from '../../contract/coordinator.js';
import { isZoottError } from '../../contract/errors.js';

/** Creates every missing node of `path` (persistent, empty, default ACL), like kazoo's makepath. */
export async function ensurePath(zk: Coordinator, path: string): Promise<void> {
  let at = '';
  for (const segment of path.split('/').filter((s) => s !== '')) {
    at += `/${segment}`;
    try {
      await zk.create(at);
    } catch (err) {
      if (!isZoottError(err, 'NODE_EXISTS')) throw err;
    }
  }
}
