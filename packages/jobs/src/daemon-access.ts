import { type Acl, CREATOR_ALL_ACL, digestAcl, OPEN_ACL, ZoottError } from '@zoott/core';

// Who the daemon is to ZooKeeper: the credentials its session authenticates with and the ACL
// of the nodes it creates.

/**
 * The ACL of the nodes this worker creates (claims, records, retry entries, replies). With
 * credentials and no explicit list it is the `auth` scheme, i.e. exactly the identities the
 * session authenticated as: a locked-down world stays locked when a worker writes to it.
 */
export function aclFromSettings(
  acl: readonly string[] | undefined,
  authenticated: boolean,
): readonly Acl[] {
  if (acl === undefined || acl.length === 0) return authenticated ? CREATOR_ALL_ACL : OPEN_ACL;
  if (acl.length === 1 && acl[0] === 'open') return OPEN_ACL;
  return acl.map((entry, i) => {
    const parts = entry.split(':');
    const perms = parts.pop() ?? '';
    const [user, password] = [parts[0] ?? '', parts.slice(1).join(':')];
    if (parts.length < 2 || user === '' || password === '')
      throw new ZoottError(
        'INVALID_CONFIG',
        `acl[${i}]: expected user:password:perms, e.g. alice:secret:cdrwa`,
        {
          field: `acl[${i}]`,
        },
      );
    return digestAcl(user, password, perms);
  });
}
