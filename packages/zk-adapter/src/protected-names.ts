import { randomBytes } from 'node:crypto';

/**
 * Protected sequential creates (Curator's idea, zoott's spelling): the name asked for gets a
 * unique marker, and the server appends the sequence after it:
 * `/q/task-` -> `/q/task-_p1a2b3c4d5e6f_0000000007`. The prefix still starts the name and
 * the sequence still ends it, so `startsWith(prefix)` and "last 10 digits" keep working; only
 * sorting by the whole name no longer gives creation order (sort by the sequence).
 */
const MARKER = /_p[0-9a-f]{12}_(?=\d{10}$)/;

// Random bytes come from a pool: one randomBytes call per create cost more than the create.
const POOL_MARKERS = 1024;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** Length of every marker: `_p`, 12 hex digits, `_`. */
export const MARKER_LENGTH = 15;

export function newMarker(): string {
  if (poolOffset + 6 > pool.length) {
    pool = randomBytes(6 * POOL_MARKERS);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + 6);
  poolOffset += 6;
  return `_p${hex}_`;
}

/** The name without the protection marker: `task-_p1a2b3c4d5e6f_0000000007` -> `task-0000000007`. */
export function unprotectedName(name: string): string {
  return name.replace(MARKER, '');
}
