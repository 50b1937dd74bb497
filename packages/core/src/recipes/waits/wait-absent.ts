import type { Coordinator } from '../../contract/coordinator.js';
import { isZoottError } from '../../contract/errors.js';
import { conditionedWait, type WaitOptions } from './conditioned-wait.js';

/**
 * zkutil's `wait_absent`: resolves once the node does not exist (at once if it is already
 * absent).
 *
 * @throws WaitTimeout (code WAIT_TIMEOUT) when the node is still there after the timeout.
 */
export function waitAbsent(
  zk: Coordinator,
  path: string,
  options: WaitOptions = {},
): Promise<void> {
  return conditionedWait<void>(zk, path, 'to be absent', options, async (watch) => {
    try {
      // `get` rather than `exists`: on an absent node it leaves no watch behind.
      await zk.get(path, { watch });
      return { done: false };
    } catch (err) {
      if (isZoottError(err, 'NO_NODE')) return { done: true, value: undefined };
      throw err;
    }
  });
}
