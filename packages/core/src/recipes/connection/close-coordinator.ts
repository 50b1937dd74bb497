import type { Coordinator } from '../../contract/coordinator.js';
import { ZoottError } from '../../contract/errors.js';
import { isCoordinator } from './coordinator-source.js';

/**
 * zkutil's `close_zk`: ends a coordinator's session and releases it. Errors while closing
 * are swallowed (the point is to let go); anything that is not a Coordinator is rejected.
 *
 * @throws ZoottError BAD_ARGUMENTS when `coordinator` is not a Coordinator.
 */
export async function closeCoordinator(coordinator: Coordinator): Promise<void> {
  if (!isCoordinator(coordinator)) {
    throw new ZoottError('BAD_ARGUMENTS', 'closeCoordinator expects a Coordinator', {
      field: 'coordinator',
    });
  }
  try {
    await coordinator.close();
  } catch {
    // Closing is best effort: a session that is already gone is as closed as it gets.
  }
}
