import { digestOf } from '../../contract/acl.js';
import { ZoottError } from '../../contract/errors.js';
import { strictShortPerms } from './perms.js';

/**
 * The digest ZooKeeper stores for `user:password` — base64(sha1("user:password")), the part
 * after `user:` in a digest ACL id. `makeDigest('xp:123')` is `'LNcZO17uqqJ4GuYoSclIsGjYniQ='`.
 *
 * @throws ZoottError INVALID_ACL_SPEC when `account` has no ':'.
 */
export function makeDigest(account: string): string {
  const colon = typeof account === 'string' ? account.indexOf(':') : -1;
  if (colon < 0) {
    throw new ZoottError('INVALID_ACL_SPEC', "an account for a digest looks like 'user:password'", {
      field: 'account',
    });
  }
  const user = account.slice(0, colon);
  return digestOf(user, account.slice(colon + 1)).slice(user.length + 1);
}

/**
 * A textual ACL entry `digest:<user>:<digest>:<perms>` (what zkCli's `setAcl` accepts), with
 * the permissions kept as given.
 *
 * @param perms letters of `cdrwa` (lower case), as a string or a list of letters.
 * @throws ZoottError INVALID_ACL_SPEC for a permission outside `cdrwa`.
 */
export function makeAclEntry(
  user: string,
  password: string,
  perms: string | Iterable<string>,
): string {
  const letters = strictShortPerms(perms);
  return `digest:${digestOf(user, password)}:${letters}`;
}
