import type { ZkOptions } from './options.js';
import { ZkCoordinator } from './zk-coordinator.js';

export { killSession } from './kill-session.js';
export { ZK_MAX_DATA_BYTES, type ZkOptions, type ZkRetryOptions } from './options.js';
export { unprotectedName } from './protected-names.js';
export { ZkCoordinator } from './zk-coordinator.js';

/**
 * Connects to ZooKeeper and resolves once the session is open.
 * `connectString` lists servers and an optional chroot: `h1:2181,h2:2181/app`.
 * Rejects with INVALID_CONFIG for bad options and CONNECTION_LOSS when no server answers
 * within `connectTimeoutMs`.
 */
export async function connectZk(
  connectString: string,
  options?: ZkOptions,
): Promise<ZkCoordinator> {
  const client = new ZkCoordinator(connectString, options);
  await client.open();
  return client;
}
