import { isZoottError } from '@zoott/core';
import { parseConnectString } from './connect-string.js';
import type { ZkOptions } from './options.js';
import { ZkCoordinator } from './zk-coordinator.js';

export { type KillSessionOptions, killSession } from './kill-session.js';
export { ZK_MAX_DATA_BYTES, type ZkOptions, type ZkRetryOptions } from './options.js';
export { unprotectedName } from './protected-names.js';
export type { ZkSaslOptions, ZkTlsOptions } from './security-options.js';
export type { ConnectionIdentity } from './who-am-i.js';
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

/**
 * Creates the chroot of a connect string (and its parents) when it is missing, through a
 * short session on the bare hosts: ZooKeeper does not create a chroot, and every request
 * below a missing one fails. A connect string without a chroot needs nothing.
 */
export async function ensureChroot(connectString: string, options?: ZkOptions): Promise<void> {
  const { chroot } = parseConnectString(connectString);
  if (chroot === null) return;
  const hosts = connectString.slice(0, connectString.indexOf('/'));
  const zk = await connectZk(hosts, options);
  try {
    let at = '';
    for (const part of chroot.split('/').filter(Boolean)) {
      at += `/${part}`;
      try {
        await zk.create(at);
      } catch (err) {
        if (!isZoottError(err, 'NODE_EXISTS')) throw err;
      }
    }
  } finally {
    await zk.close().catch(() => undefined);
  }
}
