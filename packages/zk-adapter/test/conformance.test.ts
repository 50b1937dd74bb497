import { coordinatorSuite } from '@zoott/conformance';
import type { Coordinator } from '@zoott/core';
import { startProxy, type ZkProxy } from '@zoott/zk-testkit';
import { afterAll } from 'vitest';
import { connectZk, killSession, ZK_MAX_DATA_BYTES, type ZkCoordinator } from '../src/index.js';
import { zkServer } from './helpers.js';

// Every session goes through its own proxy, so dropConnection can cut just that one.
const proxies = new Map<Coordinator, ZkProxy>();
afterAll(async () => {
  await Promise.allSettled([...proxies.values()].map((p) => p.close()));
});

coordinatorSuite({
  name: 'zookeeper 3.8 (node-zookeeper-client, patched)',
  async connect(options = {}) {
    const proxy = await startProxy(zkServer());
    const client = await connectZk(proxy.hostPort, { sessionTimeoutMs: options.sessionTimeoutMs });
    proxies.set(client, proxy);
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
});
