import type { Coordinator, ErrorCode } from '@zoott/core';

/** The groups of the suite; a harness may leave one out only with a reason (see README). */
export type SuiteGroup =
  | 'crud'
  | 'versions'
  | 'sequential'
  | 'ephemeral'
  | 'multi'
  | 'watches'
  | 'treeWatch'
  | 'acl'
  | 'limits'
  | 'session';

/** Every group of the suite, in the order they run. */
export const SUITE_GROUPS: readonly SuiteGroup[] = [
  'crud',
  'versions',
  'sequential',
  'ephemeral',
  'multi',
  'watches',
  'treeWatch',
  'acl',
  'limits',
  'session',
];

/** What an adapter hands the suite: how to open sessions on one shared tree, and how to hurt them. */
export interface CoordinatorHarness {
  /** Shown in the describe blocks, e.g. `memory` or `zookeeper 3.8`. */
  name: string;
  /**
   * Opens a NEW session, connected when the promise resolves. Every session of a harness sees
   * the same tree. The suite closes every client it opened.
   */
  connect(options?: { sessionTimeoutMs?: number }): Promise<Coordinator>;
  /**
   * Ends the client's session from the server side. Resolves once the client has seen `lost`
   * (the suite still waits for the event, with a deadline).
   */
  expireSession(client: Coordinator): Promise<void>;
  /**
   * Drops the client's connection and lets it come back with the session intact: the client
   * sees `suspended`, then `reconnected`. Optional: without it, those tests are not registered.
   */
  dropConnection?(client: Coordinator): Promise<void>;
  /** Codes an over-limit write may fail with. Default `['DATA_TOO_LARGE']`. */
  tooLargeDataCodes?: ErrorCode[];
  /** Largest node data the backend accepts: a write of exactly this many bytes must succeed. */
  maxDataBytes: number;
  /** Size of the write that must fail as too large. Default `maxDataBytes + 1`. */
  overLimitBytes?: number;
  /** Groups the backend truly cannot run, with the reason; each must be listed in its README. */
  skip?: Partial<Record<SuiteGroup, string>>;
  /** How long to wait for an event that must come (watch, session state). Default 10000 ms. */
  eventTimeoutMs?: number;
  /**
   * The identities a session of this harness has before any `addAuth`, when its transport
   * authenticates it (a SASL login, a client certificate): e.g. `[{ scheme: 'sasl', id:
   * 'conf-user-3' }]`. Each session must have its own, or none. Default: none.
   */
  sessionIdentities?(client: Coordinator): ReadonlyArray<{ scheme: string; id: string }>;
}

/** A harness, or a function that makes one when the suite starts. */
export type HarnessSource = CoordinatorHarness | (() => CoordinatorHarness);
