import { type Acl, CREATOR_ALL_ACL, OPEN_ACL } from '@zoott/core';
import { parseAclEntry, rejoinAclEntries } from './acl-entries.js';

// Who the daemon is to ZooKeeper: the credentials its session authenticates with and the ACL
// of the nodes it creates.

/**
 * The ACL of the nodes this worker creates (claims, records, retry entries, replies). With
 * credentials (digest, a SASL login, a client certificate) and no explicit list it is the `auth` scheme, i.e.
 * exactly the identities the session authenticated as: a locked-down world stays locked when
 * a worker writes to it. Entries: see {@link parseAclEntry}.
 */
export function aclFromSettings(
  acl: readonly string[] | undefined,
  authenticated: boolean,
): readonly Acl[] {
  if (acl === undefined || acl.length === 0) return authenticated ? CREATOR_ALL_ACL : OPEN_ACL;
  if (acl.length === 1 && acl[0] === 'open') return OPEN_ACL;
  // Flags and variables are cut at commas, and x509 subjects hold some.
  return rejoinAclEntries(acl).map((entry, i) => parseAclEntry(entry, `acl[${i}]`));
}
