import type { Coordinator, SessionState } from '@zoott/core';
import { connectZk, killSession, ZkCoordinator } from '@zoott/zk-adapter';
import { startProxy, type ZkProxy } from '@zoott/zk-testkit';
import type { TestBackend } from './backend.js';
import { freshChroot } from './fresh-chroot.js';

const DROP_TIMEOUT_MS = 30_000;

function asZk(client: Coordinator): ZkCoordinator {
  if (!(client instanceof ZkCoordinator)) {
    throw new TypeError('this client was not opened by the zookeeper backend');
  }
  return client;
}

function waitFor(client: Coordinator, states: SessionState[], what: string): Promise<void> {
  if (states.includes(client.state)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`${what}: still ${client.state} after ${DROP_TIMEOUT_MS} ms`));
    }, DROP_TIMEOUT_MS);
    const off = client.onSession(() => {
      if (states.includes(client.state)) {
        clearTimeout(timer);
        off();
        resolve();
      }
    });
  });
}

/**
 * A fresh chroot on the run's shared ZooKeeper. Every client connects through its own TCP
 * proxy, so `dropConnection` can cut exactly that client's connection.
 */
export async function zookeeperBackend(server: string): Promise<TestBackend> {
  const { chroot } = await freshChroot(server, 't');
  const clients: Coordinator[] = [];
  const proxies = new Map<Coordinator, ZkProxy>();
  return {
    name: 'zookeeper',
    connectString: `${server}${chroot}`,
    async connect(options = {}) {
      const proxy = await startProxy(server);
      try {
        const client = await connectZk(`${proxy.hostPort}${chroot}`, {
          sessionTimeoutMs: options.sessionTimeoutMs,
          ...(options.auth ? { auth: [{ scheme: 'digest', auth: options.auth }] } : {}),
          ...(options.defaultAcl ? { defaultAcl: options.defaultAcl } : {}),
        });
        clients.push(client);
        proxies.set(client, proxy);
        return client;
      } catch (err) {
        await proxy.close();
        throw err;
      }
    },
    async expireSession(client) {
      const zk = asZk(client);
      const proxy = proxies.get(zk);
      if (!proxy) throw new TypeError('this client was not opened by this backend');
      // Cut off while its session is closed, as a client whose session expires is: it must
      // not hear its own ephemeral nodes go before it learns the session is lost.
      await killSession(zk, { via: server, silence: (on) => proxy.setPartitioned(on) });
    },
    async dropConnection(client) {
      const proxy = proxies.get(asZk(client));
      if (!proxy) throw new TypeError('this client was not opened by this backend');
      if (client.state !== 'connected') {
        throw new Error(`dropConnection needs a connected client (state is ${client.state})`);
      }
      const suspended = waitFor(client, ['suspended', 'lost', 'closed'], 'dropConnection');
      proxy.dropConnections();
      await suspended;
      await waitFor(client, ['connected', 'lost', 'closed'], 'dropConnection');
    },
    async cleanup() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await Promise.allSettled([...proxies.values()].map((p) => p.close()));
    },
  };
}
