import { coordinatorSuite } from '@zoott/conformance';
import { afterAll, beforeAll } from 'vitest';
import { optionsOf, zooKeeperHarness } from './conformance-harness.js';
import { securedServer } from './secured-servers.js';

// The whole contract again, every session logged in with SASL DIGEST-MD5: each as a user of
// its own (taken in turn from the server's JAAS users), so a session's sasl identity is its
// alone, as the ACL tests need.
const USERS = Object.fromEntries(
  Array.from({ length: 32 }, (_, i) => [`conf-sasl-${i}`, `secret-${i}`]),
);
const names = Object.keys(USERS);
let next = 0;
let server: Awaited<ReturnType<typeof securedServer>> | undefined;
beforeAll(async () => {
  server = await securedServer({ sasl: { users: USERS } });
});
afterAll(async () => {
  await server?.stop();
});

coordinatorSuite(
  zooKeeperHarness(
    'zookeeper 3.8 with SASL DIGEST-MD5',
    () => server!.connectString,
    () => {
      const username = names[next++ % names.length]!;
      return { sasl: { username, password: USERS[username]! } };
    },
    { sessionIdentities: (client) => [{ scheme: 'sasl', id: optionsOf(client).sasl!.username }] },
  ),
);
