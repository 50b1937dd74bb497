import { coordinatorSuite } from '@zoott/conformance';
import { serverTls } from '@zoott/zk-testkit';
import { afterAll, beforeAll } from 'vitest';
import { zooKeeperHarness } from './conformance-harness.js';
import { clientTls, securedServer, testCertificates } from './secured-servers.js';

// The whole contract again, every session over TLS to a secureClientPort (the server's
// certificate checked against the CA and for 127.0.0.1): reconnects, renewals, the request
// pipeline, multi and watches as in plain text.
const certs = testCertificates();
let server: Awaited<ReturnType<typeof securedServer>> | undefined;
beforeAll(async () => {
  server = await securedServer({ tls: serverTls(certs) });
});
afterAll(async () => {
  await server?.stop();
  certs.dispose();
});

coordinatorSuite(
  zooKeeperHarness(
    'zookeeper 3.8 over TLS',
    () => server!.secureConnectString,
    () => ({ tls: clientTls(certs) }),
  ),
);
