import type { CoordinatorHarness } from '@zoott/conformance';
import type { Coordinator } from '@zoott/core';
import { startProxy, type ZkProxy } from '@zoott/zk-testkit';
import { afterAll } from 'vitest';
import {
  connectZk,
  killSession,
  ZK_MAX_DATA_BYTES,
  type ZkCoordinator,
  type ZkOptions,
} from '../src/index.js';

const optionsUsed = new WeakMap<Coordinator, ZkOptions>();

/** The options a harness session was connected with. */
export function optionsOf(client: Coordinator): ZkOptions {
  const options = optionsUsed.get(client);
  if (!options) throw new Error('not a client of a ZooKeeper harness');
  return options;
}

/**
 * The conformance harness of the ZooKeeper adapter: every session goes through its own proxy
 * (so dropConnection cuts just that one) to `server()`, connected with `options()` (TLS, a
 * SASL login) besides the suite's session timeout.
 */
export function zooKeeperHarness(
  name: string,
  server: () => string,
  options: () => ZkOptions = () => ({}),
  extra: Partial<CoordinatorHarness> = {},
): CoordinatorHarness {
  const proxies = new Map<Coordinator, ZkProxy>();
  afterAll(async () => {
    await Promise.allSettled([...proxies.values()].map((p) => p.close()));
  });
  return {
    name,
    async connect(suite = {}) {
      const proxy = await startProxy(server());
      const used = options();
      const client = await connectZk(proxy.hostPort, {
        ...used,
        sessionTimeoutMs: suite.sessionTimeoutMs,
      });
      proxies.set(client, proxy);
      optionsUsed.set(client, used);
      return client;
    },
    async expireSession(client) {
      await killSession(client as ZkCoordinator);
    },
    async dropConnection(client) {
      const proxy = proxies.get(client);
      if (!proxy) throw new Error('not a client of this harness');
      const back = new Promise<void>((resolve) => {
        const off = client.onSession((e) => {
          if (e.type === 'reconnected' || e.type === 'lost' || e.type === 'closed') {
            off();
            resolve();
          }
        });
      });
      proxy.dropConnections();
      await back;
    },
    maxDataBytes: ZK_MAX_DATA_BYTES,
    ...extra,
  };
}
