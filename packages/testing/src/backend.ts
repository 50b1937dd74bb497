import type { Acl, Coordinator } from '@zoott/core';

/** How a test session connects: its timeout, and the credentials and ACL it works with. */
export interface ConnectOptions {
  sessionTimeoutMs?: number;
  /** Digest credentials `user:password` added to the session. */
  auth?: string;
  /** ACL of the nodes it creates without naming one (default: open). */
  defaultAcl?: readonly Acl[];
}

/** One place a test body runs: the in-memory adapter or a real ZooKeeper. */
export interface Backend {
  readonly name: 'memory' | 'zookeeper';
  /**
   * A new session in this test's own namespace: memory, a fresh MemoryServer per test;
   * zookeeper, a fresh chroot `/t-<uuid>` on the run's shared server (created first).
   */
  connect(options?: ConnectOptions): Promise<Coordinator>;
  /** Ends the client's session from the server side; resolves once the client sees `lost`. */
  expireSession(client: Coordinator): Promise<void>;
  /**
   * Breaks the client's connection but not its session: the client goes `suspended`, then
   * `reconnected`; resolves once it is connected again.
   */
  dropConnection(client: Coordinator): Promise<void>;
  /** zookeeper only: `host:port/chroot` of this test's namespace, for subprocesses. */
  readonly connectString?: string;
}

/** A backend plus the cleanup that closes whatever a test opened on it. */
export interface TestBackend extends Backend {
  cleanup(): Promise<void>;
}
