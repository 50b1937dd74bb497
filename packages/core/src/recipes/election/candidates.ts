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
  const m = SEQUENCE_RE.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * Candidate names in the order they entered: by sequence number. Not by the whole name: the
 * unique tag comes before the sequence, so names sort in random order.
 */
export function candidateOrder(names: readonly string[]): string[] {
  const seqOf = new Map<string, number>();
  for (const n of names) {
    const seq = candidateSequence(n);
    if (seq !== null) seqOf.set(n, seq);
  }
  return [...seqOf.keys()].sort((a, b) => seqOf.get(a)! - seqOf.get(b)!);
}

/** The name that entered just before `mine`, or `null` when `mine` is first (the leader). */
export function predecessorOf(ordered: readonly string[], mine: string): string | null {
  const at = ordered.indexOf(mine);
  return at > 0 ? ordered[at - 1]! : null;
}

/**
 * Resolves `true` once `c` is connected in `session` again, `false` once that session is
 * over (lost, closed or replaced): what a request whose reply was lost waits for before it
 * looks whether its write applied.
 */
export function sameSessionBack(c: Coordinator, session: string): Promise<boolean> {
  const decide = (): boolean | null =>
    c.sessionId !== session || c.state === 'lost' || c.state === 'closed'
      ? false
      : c.state === 'connected'
        ? true
        : null;
  const now = decide();
  if (now !== null) return Promise.resolve(now);
  return new Promise<boolean>((resolve) => {
    const off = c.onSession(() => {
      const d = decide();
      if (d === null) return;
      off();
      resolve(d);
    });
  });
}
