import { coordinatorSuite } from '@zoott/conformance';
import { type MemoryCoordinator, MemoryServer } from '@zoott/memory-adapter';

const server = new MemoryServer();
const memory = (c: unknown) => c as MemoryCoordinator;

coordinatorSuite({
  name: 'memory',
  maxDataBytes: server.maxDataBytes,
  connect: (options) => server.connect(options),
  expireSession: async (client) => server.expireSession(memory(client).sessionId ?? ''),
  dropConnection: async (client) => {
    memory(client).disconnect();
    memory(client).reconnect();
  },
});
