import { afterEach, beforeEach, describe, inject } from 'vitest';
import type { Backend, TestBackend } from './backend.js';
import { memoryBackend } from './memory-backend.js';
import { zookeeperBackend } from './zookeeper-backend.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by @zoott/zk-testkit's vitest global setup. */
    zkConnect: string;
  }
}

/** The names describeOnBackends runs a body under, in order. */
export const BACKEND_NAMES = ['memory', 'zookeeper'] as const;

/**
 * Runs `body` once per backend (`title [memory]`, `title [zookeeper]`). Each test gets a
 * fresh backend from `backend()`; every client it opened is closed after the test. The
 * zookeeper run uses the server of zk-testkit's global setup; without one the run fails.
 */
export function describeOnBackends(title: string, body: (backend: () => Backend) => void): void {
  for (const name of BACKEND_NAMES) {
    describe(`${title} [${name}]`, () => {
      let current: TestBackend | null = null;
      beforeEach(async () => {
        current = name === 'memory' ? memoryBackend() : await zookeeperBackend(zkConnect());
      });
      afterEach(async () => {
        const done = current;
        current = null;
        await done?.cleanup();
      });
      body(() => {
        if (!current) throw new Error('backend() is only available inside a test or its hooks');
        return current;
      });
    });
  }
}

function zkConnect(): string {
  const address = inject('zkConnect');
  if (!address) {
    throw new Error(
      "no ZooKeeper address provided: add @zoott/zk-testkit's vitest-global-setup to test.globalSetup",
    );
  }
  return address;
}
