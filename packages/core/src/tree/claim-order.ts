import { KEY_SEPARATOR } from './keys.js';

/*
 * Claim order, and every rule that says what may be claimed ahead of what. A claim takes the
 * runnable task of the highest priority; among equals, the one this worker's locality score
 * prefers; then the one queued first (its entry's creation zxid, `seq`); then, inside one
 * `queueMany` transaction (one zxid), its position in that call (`tie`). Within one bucket the
 * entry name's sequence number stands in for the zxid: the server hands both out in creation
 * order, so they order a bucket's entries alike. The rules below are each a question a claim
 * asks of that order when part of what it would weigh is not known yet.
 */

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
 * Claim order of one bucket's entries, by what their names carry: higher priority first,
 * then FIFO by the name's sequence number. For entry names (integer priorities and sequence
 * numbers, no `tie`: one transaction's entries get a sequence number each) it agrees with
 * {@link compareForClaim}, without its NaN handling: the listings sort every bucket they read
 * with it.
 */
export const byClaimOrder = (
  a: Pick<Orderable, 'priority' | 'seq'>,
  b: Pick<Orderable, 'priority' | 'seq'>,
): number => (a.priority !== b.priority ? b.priority - a.priority : a.seq - b.seq);

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
  scored.sort((a, b) => {
    const pa = norm(a.task.priority, Number.NEGATIVE_INFINITY);
    const pb = norm(b.task.priority, Number.NEGATIVE_INFINITY);
    if (pa !== pb) return pa > pb ? -1 : 1;
    if (a.score !== b.score) return a.score > b.score ? -1 : 1;
    return compareForClaim(a.task, b.task);
  });
  return scored.map((s) => s.task);
}

/** A listed entry, by what claim order knows of it before its data is read. */
interface ListedOrder {
  name: string;
  priority: number;
  encodedKey: string;
}

/**
 * Whether an entry not read yet may come before a candidate of priority `bar`: a higher
 * priority, or a child of the same priority (runnable only now, queued before the roots
 * that were waiting behind it).
 */
export function mayOutrank(unread: Omit<ListedOrder, 'name'>, bar: number): boolean {
  return (
    unread.priority > bar || (unread.priority === bar && unread.encodedKey.includes(KEY_SEPARATOR))
  );
}

/**
 * The known candidates of a higher priority than every listed entry still being read: they
 * may be claimed before those reads are in (none of them could come first).
 */
export function claimableBeforeReads<T extends Pick<Orderable, 'priority'>>(
  known: readonly T[],
  unread: readonly Pick<ListedOrder, 'priority'>[],
): T[] {
  if (unread.length === 0) return [];
  const top = unread.reduce((m, entry) => Math.max(m, entry.priority), Number.NEGATIVE_INFINITY);
  return known.filter((candidate) => candidate.priority > top);
}

/**
 * `known` without the candidates of a lower priority than an `unread` entry (listed in
 * `listedIn[i]`) that its read found gone. Such a task was claimed elsewhere, cancelled, or
 * queued again under a new name the listing lacks: nothing of a lower priority from those
 * listings is claimed before they are read again (the next round), so priority holds for a
 * task queued again while it was listed.
 */
export function notBelowGone<T extends Pick<Orderable, 'priority'>>(
  known: T[],
  unread: readonly ListedOrder[],
  listedIn: readonly { readonly gone: ReadonlySet<string> }[],
): T[] {
  let top = Number.NEGATIVE_INFINITY;
  unread.forEach((entry, index) => {
    if (listedIn[index]!.gone.has(entry.name)) top = Math.max(top, entry.priority);
  });
  return top === Number.NEGATIVE_INFINITY
    ? known
    : known.filter((candidate) => candidate.priority >= top);
}

/**
 * The floor a claim round keeps to after its claims: the highest priority among `tried`
 * candidates whose claim did not happen and whose listing that made stale (a refusal for a
 * moved entry, say), or -Infinity. Such a task may be pending under a name those listings
 * lack, so no candidate of a lower priority from them may pass it before they are read
 * again: priority holds for a task queued again while it was listed.
 */
export function refusedFloor(
  got: readonly unknown[],
  tried: readonly { priority: number; bucket: number }[],
  listings: { get(bucket: number): { readonly stale: boolean } | undefined },
): number {
  let top = Number.NEGATIVE_INFINITY;
  got.forEach((claim, index) => {
    const candidate = tried[index]!;
    if (claim === null && listings.get(candidate.bucket)?.stale)
      top = Math.max(top, candidate.priority);
  });
  return top;
}

/**
 * Whether a scan of a bucket's entries (in claim order) for work above priority `floor` ends
 * at an entry of `priority`: none after it is above the floor.
 */
export function scanEndsAt(priority: number, floor: number): boolean {
  return priority <= floor;
}

/** Where a rival stands against a hand-off's child (see {@link rivalOfChild}). */
export type RivalPlace = 'ahead' | 'behind' | 'rest-behind';

/**
 * Where a read, runnable `rival` (locality `rivalScore`) stands against a hand-off's `child`
 * (`childScore`), in the order a claim call would use: `'ahead'` when it comes first,
 * `'behind'` when not, and `'rest-behind'` when it comes after the child with nothing to weigh
 * but queue order, so every later entry of its bucket (a bucket lists in that order) does too.
 * A rival that is not read yet comes first only by a higher priority: one of the child's own
 * priority cannot be claimed before its read, and the child is read and ready (`rivalScore`
 * `undefined`). A scan stops at a lower priority (`'rest-behind'`).
 */
export function rivalOfChild(
  rival: Orderable,
  rivalScore: number | undefined,
  child: Orderable,
  childScore: number,
): RivalPlace {
  if (rival.priority < child.priority) return 'rest-behind';
  if (rivalScore === undefined) return rival.priority > child.priority ? 'ahead' : 'behind';
  if (rival.priority > child.priority || rivalScore > childScore) return 'ahead';
  if (rivalScore !== childScore) return 'behind';
  if (compareForClaim(rival, child) < 0) return 'ahead';
  return rival.hints === undefined ? 'rest-behind' : 'behind';
}
