import { ZoottError } from '../../contract/errors.js';
import type { AclSpec } from '../acl/acl-lists.js';
import { makeDigestAcl } from '../acl/acl-lists.js';
import { reasonOf } from '../support/reason.js';

/** Credentials a connection adds after connecting: `[scheme, user, password]`, e.g. `['digest', 'xp', '123']`. */
export type ZkAuth = readonly [scheme: string, user: string, password: string];

function invalid(where: string, why: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', `${where}: ${why}`, { field: where });
}

/** A non-empty string, or an INVALID_CONFIG error naming `where`. */
export function readString(value: unknown, where: string): string {
  if (typeof value !== 'string' || value === '') {
    throw invalid(where, `expected a non-empty string, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * Auth as `[scheme, user, password]` or the text `scheme:user:password` (the password may
 * contain ':'); `null` means "no credentials".
 */
export function readAuth(value: unknown, where: string): ZkAuth | null {
  if (value === null) return null;
  if (typeof value === 'string') {
    const first = value.indexOf(':');
    const second = value.indexOf(':', first + 1);
    if (first <= 0 || second < 0 || second === first + 1) {
      throw invalid(where, "auth text looks like 'scheme:user:password'");
    }
    return [value.slice(0, first), value.slice(first + 1, second), value.slice(second + 1)];
  }
  if (Array.isArray(value) && value.length === 3 && value.every((v) => typeof v === 'string')) {
    if (value[0] === '' || value[1] === '')
      throw invalid(where, 'scheme and user must not be empty');
    return [value[0], value[1], value[2]] as ZkAuth;
  }
  throw invalid(
    where,
    `expected [scheme, user, password] or 'scheme:user:password', got ${JSON.stringify(value)}`,
  );
}

/**
 * ACL as a list of `[user, password, perms]` or the text `user:password:perms,user2:...`
 * (user before the first ':', perms after the last one); `null` means "default ACL".
 * Permissions are checked here, so a bad letter fails when the config is read.
 */
export function readAcl(value: unknown, where: string): AclSpec[] | null {
  if (value === null) return null;
  let specs: unknown[];
  if (typeof value === 'string') {
    specs = value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((entry) => {
        const first = entry.indexOf(':');
        const last = entry.lastIndexOf(':');
        if (first <= 0 || last === first) {
          throw invalid(
            where,
            `acl entry ${JSON.stringify(entry)} looks like 'user:password:perms'`,
          );
        }
        return [entry.slice(0, first), entry.slice(first + 1, last), entry.slice(last + 1)];
      });
  } else if (Array.isArray(value)) {
    specs = value;
  } else {
    throw invalid(
      where,
      `expected a list of [user, password, perms], got ${JSON.stringify(value)}`,
    );
  }
  try {
    makeDigestAcl(specs as AclSpec[]);
  } catch (err) {
    throw invalid(where, reasonOf(err));
  }
  return specs as AclSpec[];
}
