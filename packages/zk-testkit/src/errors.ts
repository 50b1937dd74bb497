/**
 * Thrown when no ZooKeeper can be found or started. The message names every way to get one,
 * because a test run that needs ZooKeeper must fail loudly, never skip.
 */
export class ZooKeeperUnavailableError extends Error {
  /** Same spelling as zoott's `NO_ZOOKEEPER` error code, so callers can branch on it. */
  readonly code = 'NO_ZOOKEEPER';

  constructor(reasons: readonly string[]) {
    super(unavailableMessage(reasons));
    this.name = 'ZooKeeperUnavailableError';
  }
}

function unavailableMessage(reasons: readonly string[]): string {
  const tried = reasons.map((r) => `  - ${r}`).join('\n');
  return `No ZooKeeper server is available for the tests (ZooKeeper tests never skip).
Tried:
${tried}
Any one of these makes one available:
  1. point at a running server:  export ZOOTT_ZK_CONNECT=127.0.0.1:2181
  2. install it locally:         sudo apt-get install zookeeper   (Debian/Ubuntu, brings Java)
                                 or unpack Apache ZooKeeper 3.8+ and export ZOOKEEPER_HOME=/path/to/it
  3. run a Docker engine:        the official 'zookeeper' image is then started with testcontainers`;
}

/** The server process could not be started or did not become ready. */
export class ZooKeeperStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ZooKeeperStartError';
  }
}
