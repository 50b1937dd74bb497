import type { LocalityScore, Orderable } from './claim-order.js';

// Claim order itself lives in claim-order.ts; these names stay importable from here.
export {
  compareForClaim,
  type LocalityScore,
  type Orderable,
  orderForWorker,
} from './claim-order.js';

/** What a worker holds, matched against a task's hints. */
export interface WorkerPlace {
  /** Its locality identity, matched against `hints.server`. */
  server?: string;
  /** Whether the file a `filename` hint names is local here. */
  hasFile?: (filename: string) => boolean;
  /** Whether the dataset a `dataset` hint names is cached here. */
  hasDataset?: (dataset: string) => boolean;
}

/** Score of a hint this worker matches: a server outranks a file, a file a dataset. */
const HINT_SCORE = { server: 4, filename: 2, dataset: 1 } as const;

/**
 * A ready-made locality score from what a worker knows about itself: +4 when the task
 * asks for this server, +2 when its file is local, +1 when its dataset is cached here.
 */
export function hintLocality(worker: WorkerPlace): LocalityScore {
  return (task) => {
    const hints = task.hints;
    if (!hints) return 0;
    let score = 0;
    if (hints.server !== undefined && hints.server === worker.server) score += HINT_SCORE.server;
    if (hints.filename !== undefined && worker.hasFile?.(hints.filename))
      score += HINT_SCORE.filename;
    if (hints.dataset !== undefined && worker.hasDataset?.(hints.dataset))
      score += HINT_SCORE.dataset;
    return score;
  };
}

/** What another live worker advertises in its registry node (see {@link leftForPeer}). */
export interface PeerPlace {
  server?: string;
  /** Task types it runs; a peer that cannot run a task is no better place for it. */
  types?: readonly string[];
  /** It serves `filename` hints from a local data directory, so it may hold any file. */
  files?: boolean;
  /** Datasets it caches. */
  datasets?: readonly string[];
}

/**
 * The best hint score a peer may reach for `task`: what {@link hintLocality} would give it
 * there, counting a `filename` hint as matched by every peer that keeps files (a file's
 * presence is only known where it is: a peer that serves files may hold it).
 */
function peerScore(task: { type: string; hints?: Orderable['hints'] }, peer: PeerPlace): number {
  const hints = task.hints;
  if (!hints || (peer.types !== undefined && !peer.types.includes(task.type))) return 0;
  let score = 0;
  if (hints.server !== undefined && hints.server === peer.server) score += HINT_SCORE.server;
  if (hints.filename !== undefined && peer.files === true) score += HINT_SCORE.filename;
  if (hints.dataset !== undefined && peer.datasets?.includes(hints.dataset))
    score += HINT_SCORE.dataset;
  return score;
}

/**
 * Whether a worker scoring `mine` (its {@link hintLocality} score) for `task` should leave
 * it, for the locality wait, to another live worker: true when some peer that runs the
 * task's type may match its hints better (see `peerScore`). `peers` `undefined` (not known
 * yet): a `hints.server` naming another worker is presumed alive, and nobody else is
 * presumed to hold a file or dataset.
 */
export function leftForPeer(
  task: { type: string; hints?: Orderable['hints'] },
  mine: number,
  peers: readonly PeerPlace[] | undefined,
): boolean {
  const hints = task.hints;
  if (!hints) return false;
  if (peers === undefined)
    return hints.server !== undefined && peerScore(task, { server: hints.server }) > mine;
  for (const peer of peers) if (peerScore(task, peer) > mine) return true;
  return false;
}
