/** A fresh chroot on the run's real ZooKeeper (zk-testkit's global setup) per test. */
import type { Coordinator } from '@zoott/core';
import { freshChroot } from '@zoott/testing';
import { connectZk, type ZkOptions } from '@zoott/zk-adapter';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    zkConnect: string;
  }
}

export interface ZkNamespace {
  /** `host:port/chroot`, for subprocesses and other clients. */
  connectString: string;
  /** `host:port` of the server (no chroot). */
  server: string;
  chroot: string;
  connect(options?: ZkOptions): Promise<Coordinator>;
  cleanup(): Promise<void>;
}

export async function zkNamespace(): Promise<ZkNamespace> {
  const server = inject('zkConnect');
  if (!server) throw new Error('no ZooKeeper: the zk-testkit global setup must run');
  const { chroot } = await freshChroot(server, 'rel');
  const clients: Coordinator[] = [];
  return {
    server,
    chroot,
    connectString: `${server}${chroot}`,
    async connect(options) {
      const c = await connectZk(`${server}${chroot}`, options);
      clients.push(c);
      return c;
    },
    async cleanup() {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}

/** Resolves once `check` returns true; throws after `timeoutMs` (a generous deadline). */
export async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not true within ${timeoutMs} ms`);
}

/** The shared error code a promise rejects with (`null` when it resolves). */
export async function codeOf(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? code : `non-zoott error: ${String(err)}`;
  }
}
