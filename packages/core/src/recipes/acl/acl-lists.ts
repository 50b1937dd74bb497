import { type Acl, digestAcl, Perms, permsToShort } from '../../contract/acl.js';
import { ZoottError } from '../../contract/errors.js';
import { permToLong } from './perms.js';

/** One zkutil ACL spec: `[user, password, perms]`, e.g. `['xp', '123', 'cdrwa']`. */
export type AclSpec = readonly [user: string, password: string, perms: string];

/** One entry as `parseAcl` gives it: `[scheme, user, perms]`, e.g. `['digest', 'xp', 'cdrwa']`. */
export type AclTriple = [scheme: string, user: string, perms: string];

/**
 * zkutil's `make_kazoo_digest_acl`: `[user, password, perms]` specs to the contract's ACL
 * entries (`digest` scheme). `null`/`undefined` passes through as `null` ("use the default").
 *
 * @throws ZoottError INVALID_ACL_SPEC for a malformed spec or a permission outside `cdrwa`.
 */
export function makeDigestAcl(specs: readonly AclSpec[]): Acl[];
export function makeDigestAcl(specs: readonly AclSpec[] | null | undefined): Acl[] | null;
export function makeDigestAcl(specs: readonly AclSpec[] | null | undefined): Acl[] | null {
  if (specs === null || specs === undefined) return null;
  return specs.map((spec, index) => {
    if (!Array.isArray(spec) || spec.length !== 3 || !spec.every((s) => typeof s === 'string')) {
      throw new ZoottError(
        'INVALID_ACL_SPEC',
        `acl entry ${index} must be [user, password, perms], got ${JSON.stringify(spec)}`,
        { field: `acl[${index}]` },
      );
    }
    const [user, password, perms] = spec;
    permToLong(perms); // validates every letter, any case
    return digestAcl(user, password, perms);
  });
}

/**
 * zkutil's `parse_kazoo_acl`: ACL entries to `[scheme, user, perms]`. For digest ids the user
 * is the part before ':'; permissions come back in `cdrwa` order (zkutil used kazoo's order,
 * which only differs in letter order).
 */
export function parseAcl(acls: readonly Acl[]): AclTriple[] {
  return acls.map((acl) => [
    acl.scheme,
    acl.id.split(':')[0] as string,
    acl.perms === Perms.ALL ? 'cdrwa' : permsToShort(acl.perms),
  ]);
}
