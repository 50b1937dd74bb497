/**
 * What a worker needs to order candidate tasks: the producer's priority, the queue order
 * (`seq`, e.g. a ZooKeeper sequence number or creation zxid) and placement hints.
 */
export interface Orderable {
  /** Higher runs first. Non-finite values sort as the lowest priority. */
  priority: number;
  /** Queue order; lower was queued earlier. */
  seq: number;
  /** Order among tasks of one `seq` (queued in one transaction); lower first, absent = 0. */
  tie?: number;
  hints?: { server?: string; filename?: string; dataset?: string };
}

/** How much a worker would like to run a task here (cache, files, host); higher = prefer. */
export type LocalityScore = (task: Orderable) => number;

const norm = (n: number, ifBad: number): number => (Number.isNaN(n) ? ifBad : n);

/**
 * Claim order: priority descending, then `seq` ascending (FIFO), then `tie`. A total
 * preorder, ties only for equal priority, seq and tie; NaN sorts like -Infinity priority /
 * last seq.
 */
export function compareForClaim(a: Orderable, b: Orderable): number {
  const pa = norm(a.priority, Number.NEGATIVE_INFINITY);
  const pb = norm(b.priority, Number.NEGATIVE_INFINITY);
  if (pa !== pb) return pa > pb ? -1 : 1;
  const sa = norm(a.seq, Number.POSITIVE_INFINITY);
  const sb = norm(b.seq, Number.POSITIVE_INFINITY);
  if (sa !== sb) return sa < sb ? -1 : 1;
  const ta = a.tie ?? 0;
  const tb = b.tie ?? 0;
  return ta === tb ? 0 : ta < tb ? -1 : 1;
}

/**
 * The order in which a worker should try to claim `tasks` (a new array; the input is left
 * alone). Priority always wins, so a local low-priority task never overtakes a remote
 * high-priority one; among equal priorities the locality score (higher first, called once
 * per task, NaN counts as 0) decides, then FIFO.
 */
export function orderForWorker<T extends Orderable>(
  tasks: readonly T[],
  locality?: LocalityScore,
): T[] {
  const scored = tasks.map((task) => ({ task, score: locality ? norm(locality(task), 0) : 0 }));
  scored.sort((x, y) => {
    const pa = norm(x.task.priority, Number.NEGATIVE_INFINITY);
    const pb = norm(y.task.priority, Number.NEGATIVE_INFINITY);
    if (pa !== pb) return pa > pb ? -1 : 1;
    if (x.score !== y.score) return x.score > y.score ? -1 : 1;
    return compareForClaim(x.task, y.task);
  });
  return scored.map((s) => s.task);
}

/**
 * A ready-made locality score from what a worker knows about itself: +4 when the task
 * asks for this server, +2 when its file is local, +1 when its dataset is cached here.
 */
export function hintLocality(worker: {
  server?: string;
  hasFile?: (filename: string) => boolean;
  hasDataset?: (dataset: string) => boolean;
}): LocalityScore {
  return (task) => {
    const h = task.hints;
    if (!h) return 0;
    let score = 0;
    if (h.server !== undefined && h.server === worker.server) score += 4;
    if (h.filename !== undefined && worker.hasFile?.(h.filename)) score += 2;
    if (h.dataset !== undefined && worker.hasDataset?.(h.dataset)) score += 1;
    return score;
  };
}
