import type { Coordinator } from '@zoott/core';
import { freshNamespace, SELF } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, inject } from 'vitest';
import { startWorkerDaemon, type WorkerDaemon } from '../src/internal.js';

/** What the tests of one file share: a fresh namespace, a client on it, one daemon serving a world. */
export interface DaemonOnZookeeper {
  ns: string;
  client: Coordinator;
  daemon: WorkerDaemon;
}

export interface DaemonOnZookeeperOptions {
  world: string;
  nodeId: string;
  concurrency: number;
  allowExec: string[];
}

/**
 * Registers, in the calling describe block, a beforeAll that starts a worker daemon on a
 * fresh namespace of the real ZooKeeper (running jobs as this user) and an afterAll that
 * stops it. The returned object is filled in by the beforeAll: read its fields in tests only.
 */
export function daemonOnZookeeper(options: DaemonOnZookeeperOptions): DaemonOnZookeeper {
  const zk: Partial<DaemonOnZookeeper> = {};

  beforeAll(async () => {
    zk.ns = await freshNamespace(inject('zkConnect'));
    zk.client = await connectZk(zk.ns);
    zk.daemon = await startWorkerDaemon({
      connect: zk.ns,
      createWorld: true,
      world: options.world,
      nodeId: options.nodeId,
      concurrency: options.concurrency,
      allowExec: options.allowExec,
      runAs: SELF,
      killGraceMs: 500,
      logLevel: 'silent',
    });
  });

  afterAll(async () => {
    await zk.daemon?.stop();
    await zk.client?.close();
  });

  return zk as DaemonOnZookeeper;
}
