import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  makeZkTestCertificates,
  type StartZooKeeperOptions,
  startZooKeeper,
  type ZkTestCertificates,
  type ZooKeeperServer,
} from '@zoott/zk-testkit';
import type { ZkTlsOptions } from '../src/index.js';

/** Certificates in a temporary folder, removed by `dispose`. */
export function testCertificates(): ZkTestCertificates & { dispose(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'zk-adapter-certs-'));
  return {
    ...makeZkTestCertificates(dir),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A secured server of the test's own; its TLS address is `secureConnectString`. */
export async function securedServer(security: StartZooKeeperOptions['security']) {
  const server = await startZooKeeper({ security, heapMb: 128 });
  return server as ZooKeeperServer & { secureConnectString: string };
}

/** TLS options of the adapter for these certificates: the CA, and a client identity if asked. */
export function clientTls(
  certs: ZkTestCertificates,
  who?: 'client' | 'otherClient' | 'foreignClient',
  extra: Partial<ZkTlsOptions> = {},
): ZkTlsOptions {
  return {
    ca: readFileSync(certs.ca),
    ...(who ? { cert: readFileSync(certs[who].cert), key: readFileSync(certs[who].key) } : {}),
    ...extra,
  };
}
