import type { Coordinator, NodeData } from '../../contract/coordinator.js';
import { conditionedWait, type WaitOptions } from './conditioned-wait.js';

/** Options of `getNext`: the version already seen, plus those of every wait. */
export interface GetNextOptions extends WaitOptions {
  /** Return once the node's version is greater than this; -1 (the default) returns at once. */
  version?: number;
}

/**
 * zkutil's `get_next`: waits until the node's data version is greater than `version`, then
 * returns its data and stat. Typical use: read, process, then `getNext(path, { version })` to
 * sleep until the next write.
 *
 * @throws WaitTimeout (code WAIT_TIMEOUT) when the timeout passes first.
 * @throws ZoottError NO_NODE when the node does not exist (as zkutil), or the session's
 *   error when it is lost or closed while waiting.
 */
export function getNext(
  zk: Coordinator,
  path: string,
  options: GetNextOptions = {},
): Promise<NodeData> {
  const version = options.version ?? -1;
  return conditionedWait<NodeData>(
    zk,
    path,
    `to pass version ${version}`,
    options,
    async (watch) => {
      const node = await zk.get(path, { watch });
      return node.stat.version > version ? { done: true, value: node } : { done: false };
    },
  );
}
