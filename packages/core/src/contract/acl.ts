import { createHash } from 'node:crypto';
import { ZoottError } from './errors.js';

/** ZooKeeper permission bits, as on the wire. */
export const Perms = {
  READ: 1,
  WRITE: 2,
  CREATE: 4,
  DELETE: 8,
  ADMIN: 16,
  ALL: 31,
} as const;

/** Short letters in ZooKeeper's canonical `cdrwa` order. */
const LETTERS: ReadonlyArray<readonly [string, number]> = [
  ['c', Perms.CREATE],
  ['d', Perms.DELETE],
  ['r', Perms.READ],
  ['w', Perms.WRITE],
  ['a', Perms.ADMIN],
];

/** One access-control entry: a scheme (`world`, `digest`, `ip`, `auth`), an id, a permission mask. */
export interface Acl {
  scheme: string;
  id: string;
  perms: number;
}

/** `world:anyone` with every permission: ZooKeeper's OPEN_ACL_UNSAFE. */
export const OPEN_ACL: readonly Acl[] = Object.freeze([
  { scheme: 'world', id: 'anyone', perms: Perms.ALL },
]);
/** `world:anyone` read-only: ZooKeeper's READ_ACL_UNSAFE. */
export const READ_ACL: readonly Acl[] = Object.freeze([
  { scheme: 'world', id: 'anyone', perms: Perms.READ },
]);
/** Everything for whoever authenticated on the session that creates the node (`auth` scheme). */
export const CREATOR_ALL_ACL: readonly Acl[] = Object.freeze([
  { scheme: 'auth', id: '', perms: Perms.ALL },
]);

/** Parses `cdrwa`-style letters (any case, any order) into a mask; anything else is an error. */
export function permsFromShort(short: string | Iterable<string>): number {
  let mask = 0;
  for (const ch of typeof short === 'string' ? short : Array.from(short).join('')) {
    const hit = LETTERS.find(([l]) => l === ch.toLowerCase());
    if (!hit) {
      throw new ZoottError(
        'INVALID_ACL_SPEC',
        `permission ${JSON.stringify(ch)} is not one of c, d, r, w, a`,
        {
          field: 'perms',
        },
      );
    }
    mask |= hit[1];
  }
  return mask;
}

/** The mask as letters in `cdrwa` order (`''` for no permission). */
export function permsToShort(mask: number): string {
  return LETTERS.filter(([, bit]) => (mask & bit) !== 0)
    .map(([l]) => l)
    .join('');
}

/**
 * ZooKeeper's digest for a `user:password` pair: `user:base64(sha1("user:password"))`.
 * This is what the server computes for `addAuth('digest', 'user:password')`, so an ACL built
 * from it admits exactly the sessions that authenticated with that password.
 */
export function digestOf(user: string, password: string): string {
  const hash = createHash('sha1').update(`${user}:${password}`, 'utf8').digest('base64');
  return `${user}:${hash}`;
}

/** A `digest` ACL entry for a user/password with the given `cdrwa` permissions. */
export function digestAcl(user: string, password: string, perms: string | number): Acl {
  return {
    scheme: 'digest',
    id: digestOf(user, password),
    perms: typeof perms === 'number' ? perms : permsFromShort(perms),
  };
}

/** Checks the shape of an ACL list before it reaches a server; throws INVALID_ACL with the reason. */
export function validateAcl(acl: readonly Acl[], path?: string): void {
  if (!Array.isArray(acl) || acl.length === 0) {
    throw new ZoottError('INVALID_ACL', 'an ACL list needs at least one entry', { path });
  }
  for (const [index, entry] of acl.entries()) {
    const bad = (why: string) => new ZoottError('INVALID_ACL', `entry ${index}: ${why}`, { path });
    if (typeof entry?.scheme !== 'string' || entry.scheme === '')
      throw bad('scheme must be a non-empty string');
    if (typeof entry.id !== 'string') throw bad('id must be a string');
    if (!Number.isInteger(entry.perms) || entry.perms < 0 || entry.perms > Perms.ALL)
      throw bad('perms must be a mask of 0..31');
    if (entry.scheme === 'world' && entry.id !== 'anyone')
      throw bad("the world scheme only knows the id 'anyone'");
    if (entry.scheme === 'digest' && !/^[^:]+:[A-Za-z0-9+/=]{28}$/.test(entry.id)) {
      throw bad("a digest id looks like 'user:base64(sha1)'");
    }
  }
}
