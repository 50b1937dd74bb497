import type { Coordinator } from '@zoott/core';
import { MemoryCoordinator, MemoryServer, systemClock } from '@zoott/memory-adapter';
import type { TestBackend } from './backend.js';

function asMemory(client: Coordinator): MemoryCoordinator {
  if (!(client instanceof MemoryCoordinator)) {
    throw new TypeError('this client was not opened by the memory backend');
  }
  return client;
}

/** A fresh in-memory server per test, with real timers so session timeouts behave as on ZooKeeper. */
export function memoryBackend(): TestBackend {
  const server = new MemoryServer({ clock: systemClock });
  const clients: Coordinator[] = [];
  return {
    name: 'memory',
    async connect(options = {}) {
      const client = await server.connect({
        sessionTimeoutMs: options.sessionTimeoutMs,
        ...(options.auth ? { auth: [{ scheme: 'digest', auth: options.auth }] } : {}),
        ...(options.defaultAcl ? { defaultAcl: options.defaultAcl } : {}),
      });
      clients.push(client);
      return client;
    },
    async expireSession(client) {
      const id = client.sessionId;
      if (id) server.expireSession(id);
    },
    async dropConnection(client) {
      const memory = asMemory(client);
      memory.disconnect();
      memory.reconnect();
    },
    async cleanup() {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}
