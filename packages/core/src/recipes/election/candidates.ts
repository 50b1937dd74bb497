import type { Coordinator } from '../../contract/coordinator.js';

/**
 * Candidate node names: `c-<tag>-<10-digit sequence>`. The tag is unique per attempt to
 * enter, so after a create whose reply was lost the candidate can find the node it made
 * (Curator's "protected" create) instead of entering twice. An adapter may add its own
 * marker between our prefix and the sequence; the prefix still starts the name and the
 * sequence still ends it.
 */
export const CANDIDATE_PREFIX = 'c-';

const SEQUENCE_RE = /(\d{10})$/;

/** The server's sequence number at the end of a candidate name, or `null` for a foreign node. */
export function candidateSequence(name: string): number | null {
  if (!name.startsWith(CANDIDATE_PREFIX)) return null;
  const match = SEQUENCE_RE.exec(name);
  return match ? Number(match[1]) : null;
}

/**
 * Candidate names in the order they entered: by sequence number. Not by the whole name: the
 * unique tag comes before the sequence, so names sort in random order.
 */
export function candidateOrder(names: readonly string[]): string[] {
  const seqOf = new Map<string, number>();
  for (const name of names) {
    const seq = candidateSequence(name);
    if (seq !== null) seqOf.set(name, seq);
  }
  return [...seqOf.keys()].sort((a, b) => seqOf.get(a)! - seqOf.get(b)!);
}

/** The name that entered just before `mine`, or `null` when `mine` is first (the leader). */
export function predecessorOf(ordered: readonly string[], mine: string): string | null {
  const at = ordered.indexOf(mine);
  return at > 0 ? ordered[at - 1]! : null;
}

/**
 * Resolves `true` once `coordinator` is connected in `session` again, `false` once that session is
 * over (lost, closed or replaced): what a request whose reply was lost waits for before it
 * looks whether its write applied.
 */
export function sameSessionBack(coordinator: Coordinator, session: string): Promise<boolean> {
  const decide = (): boolean | null =>
    coordinator.sessionId !== session ||
    coordinator.state === 'lost' ||
    coordinator.state === 'closed'
      ? false
      : coordinator.state === 'connected'
        ? true
        : null;
  const now = decide();
  if (now !== null) return Promise.resolve(now);
  return new Promise<boolean>((resolve) => {
    const off = coordinator.onSession(() => {
      const decision = decide();
      if (decision === null) return;
      off();
      resolve(decision);
    });
  });
}
