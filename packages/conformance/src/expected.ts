import type { Acl } from '@zoott/core';

/**
 * What the suite expects, written out literally. The suite judges an adapter against
 * ZooKeeper's behaviour, so it must not compute its expectations with the code under test
 * (core's ACL helpers): a bug there would move the expectation and the result together.
 */

/** ZooKeeper's permission bits, as on the wire. */
export const PERMS = {
  READ: 1,
  WRITE: 2,
  CREATE: 4,
  DELETE: 8,
  ADMIN: 16,
  ALL: 31,
} as const;

/** `world:anyone` with every permission: ZooKeeper's OPEN_ACL_UNSAFE, a node's default ACL. */
export const OPEN_ACL: readonly Acl[] = Object.freeze([
  { scheme: 'world', id: 'anyone', perms: PERMS.ALL },
]);

/**
 * Digest ids, `user:base64(sha1("user:password"))`, as printed by ZooKeeper's own
 * `DigestAuthenticationProvider` (`java -cp zookeeper.jar
 * org.apache.zookeeper.server.auth.DigestAuthenticationProvider conf-admin:conf-secret`).
 */
export const DIGEST_IDS = {
  'conf-admin:conf-secret': 'conf-admin:L24Qoz31dKdYi1PDe/BL90K1hqk=',
  'bob:pw': 'bob:ikIaKsbtGweaHnb/jKn7OHqbunM=',
  'dave:pw': 'dave:hVRiCgu1nqnQQQCmeNdNsYvaxAs=',
} as const;

/** A `digest` ACL entry for one of the users above. */
export function digestEntry(credentials: keyof typeof DIGEST_IDS, perms: number): Acl {
  return { scheme: 'digest', id: DIGEST_IDS[credentials], perms };
}
