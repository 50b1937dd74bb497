import { ZoottError } from '../../contract/errors.js';

/** Long permission names in zkutil's (and ZooKeeper's) `cdrwa` order. */
const LONG: Readonly<Record<string, string>> = {
  c: 'create',
  d: 'delete',
  r: 'read',
  w: 'write',
  a: 'admin',
};
const SHORT: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(LONG).map(([s, l]) => [l, s]),
);

/** Letter case of the permission names `permToLong` returns. */
export interface PermCaseOptions {
  /** Lower-case result (the default); `false` gives upper case (`CREATE`, `CDRWA`). */
  lower?: boolean;
}

function badPerm(value: unknown, allowed: string): ZoottError {
  return new ZoottError(
    'INVALID_ACL_SPEC',
    `permission ${JSON.stringify(value)} is not one of ${allowed}`,
    { field: 'perms' },
  );
}

/**
 * Short permissions (`'cdrw'`, `['c', 'd']`, any case) to long names, in the given order:
 * `permToLong('rw')` is `['read', 'write']`.
 *
 * @throws ZoottError INVALID_ACL_SPEC for an element that is not one of c, d, r, w, a.
 */
export function permToLong(
  short: string | Iterable<string>,
  options: PermCaseOptions = {},
): string[] {
  const out: string[] = [];
  for (const ch of short) {
    const long = typeof ch === 'string' ? LONG[ch.toLowerCase()] : undefined;
    if (long === undefined) throw badPerm(ch, 'c, d, r, w, a');
    out.push(options.lower === false ? long.toUpperCase() : long);
  }
  return out;
}

/**
 * The reverse of `permToLong`: `permToShort(['create', 'READ'])` is `'cr'`.
 *
 * @throws ZoottError INVALID_ACL_SPEC for a name that is not create/delete/read/write/admin.
 */
export function permToShort(long: Iterable<string>, options: PermCaseOptions = {}): string {
  let out = '';
  for (const name of long) {
    const short = typeof name === 'string' ? SHORT[name.toLowerCase()] : undefined;
    if (short === undefined) throw badPerm(name, 'create, delete, read, write, admin');
    out += short;
  }
  return options.lower === false ? out.toUpperCase() : out;
}

/**
 * Checks zkutil-style short permissions strictly (lower-case single letters of `cdrwa`, as
 * `make_acl_entry` does) and returns them joined, order and repeats kept.
 */
export function strictShortPerms(perms: string | Iterable<string>): string {
  let out = '';
  for (const ch of perms) {
    if (typeof ch !== 'string' || !(ch in LONG)) throw badPerm(ch, 'c, d, r, w, a');
    out += ch;
  }
  return out;
}
