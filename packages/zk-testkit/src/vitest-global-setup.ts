import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startZooKeeper } from './start.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `host:port` of the ZooKeeper started once for the whole test run. */
    zkConnect: string;
  }
}

/**
 * Vitest global setup: starts ONE standalone ZooKeeper for the test run and provides its
 * address as `inject('zkConnect')`. Without any ZooKeeper it throws, so the run fails: a
 * ZooKeeper test is never skipped. Use it with `test.globalSetup` in vitest.config.ts.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const server = await startZooKeeper();
  project.provide('zkConnect', server.connectString);
  if (process.env.ZOOTT_ZK_VERBOSE) {
    console.log(
      `[zk-testkit] ${server.kind} ZooKeeper at ${server.connectString} (${Date.now() - started} ms)`,
    );
  }
  return () => server.stop();
}
