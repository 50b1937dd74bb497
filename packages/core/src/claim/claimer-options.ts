import type { LocalityScore, PeerPlace } from '../tree/ordering.js';

/**
 * What a claimer asks before it claims a task: whether a task of that type may start now.
 * The engine's worker gives its claimer its `RateLimits`.
 */
export interface ClaimGate {
  /** Whether a start of `type` is free now (takes nothing). */
  open(type: string, now: number): boolean;
  /** Takes one start of `type` if one is free now. */
  take(type: string, now: number): boolean;
  /** Gives back a start taken for a claim that did not happen. */
  refund(type: string): void;
  /** When the next start of `type` is free (ms), so an idle worker sleeps until then. */
  nextAt(type: string, now: number): number;
}

/** How a claimer picks tasks. */
export interface ClaimerOptions {
  /** Identity written into the working node and the completed record. */
  worker: string;
  /** This worker's locality identity, matched against `hints.server`. */
  server?: string;
  host?: string;
  pid?: number;
  /**
   * Slots free now besides the one a completing task leaves (a worker's, counted while that
   * task still runs): a hand-off may pass up to that many runnable tasks that come before
   * its child in claim order, since each has a free slot of its own. Default 0.
   */
  spareSlots?: () => number;
  /**
   * Learn of new and removed entries in the watched buckets from tree watches
   * (`Coordinator.watchTree`, where the coordinator offers it): a new entry is listed at once,
   * a child queued while its parent runs here is read at once (so the parent's completion can
   * hand its slot to it), and a bucket with a tree watch needs no children watch (see
   * docs/protocol.md, "Entry events"). The watches cost an event per create, claim and
   * completion in the bucket. `true`: from the start, on every watched bucket. `'small'`
   * (what a worker uses by default): on watched buckets whose listings are small, where an
   * event costs less than the re-listing it saves. `'children'`: on every watched bucket once
   * this claimer claims a task with listed children. Default off.
   */
  entryEvents?: boolean | 'children' | 'small';
  /** Task types this claimer runs; `undefined` = every type. */
  types?: readonly string[];
  /** Whether a type is paused now (claimed by nobody until resumed); default: none is. */
  paused?: (type: string) => boolean;
  /** Whether a `filename` hint's file is local to this worker. */
  hasFile?: (filename: string) => boolean;
  /** Datasets this worker caches, matched against `hints.dataset`. */
  datasets?: readonly string[];
  /** Extra locality score; added to the hint score (server, file, dataset). */
  locality?: LocalityScore;
  /** How long a task hinted to another live worker waits before this one takes it. Default 2000 ms. */
  localityWaitMs?: number;
  /** Runnable entries per bucket whose data is read ahead and ordered. Default 16. */
  lookahead?: number;
  /**
   * Longest time a changed bucket is served from its cached listing while that listing still
   * offers plenty of work (2 x lookahead entries). Default 500 ms, and at least 1 ms per
   * cached entry. A bucket running low is re-read at once.
   */
  relistMs?: number;
  /**
   * What the other live workers advertise (see `leftForPeer`); `undefined`: a hinted
   * server is presumed alive and nobody else is presumed to hold a file or dataset.
   */
  peers?: () => readonly PeerPlace[] | undefined;
  /** A bucket this claimer does not own, listed by an idle steal pass, changed since. */
  onForeignChange?: (bucket: number) => void;
  /** Whether a steal pass's listing of `bucket` leaves a children watch; default yes. */
  scoutWatch?: (bucket: number) => boolean;
  /** Cluster-wide rate limits: a task starts only when the gate has a start free for its type. */
  gate?: ClaimGate;
}
