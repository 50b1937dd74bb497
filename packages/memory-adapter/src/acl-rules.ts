import { type Acl, Perms } from '@zoott/core';
import { digestOf } from '@zoott/core/internal';
import { ServerRefusal } from './refusal.js';

/** An identity a session holds, as ZooKeeper's auth providers see it. */
export interface AuthId {
  scheme: string;
  id: string;
}

/** The address every in-memory session "connects from", so `ip` ACLs behave as on a local server. */
export const CLIENT_IP = '127.0.0.1';

/**
 * Turns `addAuth(scheme, auth)` into an identity, like ZooKeeper's auth providers:
 * `digest` takes `user:password` and yields `user:base64(sha1)`. Anything else fails
 * AUTH_FAILED (ZooKeeper also drops the connection then; here the session stays usable).
 */
export function authenticate(scheme: string, auth: string): AuthId {
  if (scheme === 'digest') {
    const colon = auth.indexOf(':');
    if (colon < 0) {
      throw new ServerRefusal('AUTH_FAILED', "digest credentials must look like 'user:password'");
    }
    return { scheme, id: digestOf(auth.slice(0, colon), auth.slice(colon + 1)) };
  }
  throw new ServerRefusal(
    'AUTH_FAILED',
    `no authentication provider for scheme ${JSON.stringify(scheme)}`,
  );
}

/** Java's `String.split(":")`, which drops trailing empty strings; ZooKeeper validates digest ids with it. */
function javaSplitColon(text: string): string[] {
  const parts = text.split(':');
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

function parseIpv4(text: string): number | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!match) return null;
  const octets = match.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return null;
  return octets.reduce((acc, o) => acc * 256 + o, 0);
}

/** `a.b.c.d` or `a.b.c.d/bits`; null when malformed. */
function parseIpSpec(id: string): { addr: number; bits: number } | null {
  const [addrText = '', bitsText, extra] = id.split('/');
  if (extra !== undefined) return null;
  const addr = parseIpv4(addrText);
  const bits = bitsText === undefined ? 32 : /^\d{1,2}$/.test(bitsText) ? Number(bitsText) : -1;
  if (addr === null || bits < 0 || bits > 32) return null;
  return { addr, bits };
}

function ipMatches(spec: string, ip: string): boolean {
  const parsed = parseIpSpec(spec);
  const addr = parseIpv4(ip);
  if (!parsed || addr === null) return false;
  const mask = parsed.bits === 0 ? 0 : (0xffffffff << (32 - parsed.bits)) >>> 0;
  return (parsed.addr & mask) >>> 0 === (addr & mask) >>> 0;
}

/** Whether ZooKeeper's provider for `scheme` accepts `id` (unknown schemes are never valid). */
function isValidId(scheme: string, id: string): boolean {
  switch (scheme) {
    case 'world':
      return id === 'anyone';
    case 'digest':
      return javaSplitColon(id).length === 2;
    case 'ip':
      return parseIpSpec(id) !== null;
    default:
      return false;
  }
}

/**
 * ZooKeeper's `fixupACL`: checks an ACL given to create/setAcl and expands `auth` entries into
 * the session's authenticated ids. Empty lists, unknown schemes, malformed ids, bad permission
 * masks and an `auth` entry on a session without credentials fail INVALID_ACL.
 */
export function fixupAcl(acl: readonly Acl[] | undefined, authIds: readonly AuthId[]): Acl[] {
  const invalid = (why: string) => new ServerRefusal('INVALID_ACL', why);
  if (!Array.isArray(acl) || acl.length === 0)
    throw invalid('an ACL list needs at least one entry');
  const out: Acl[] = [];
  const add = (entry: Acl) => {
    if (
      !out.some((e) => e.scheme === entry.scheme && e.id === entry.id && e.perms === entry.perms)
    ) {
      out.push(entry);
    }
  };
  for (const [index, entry] of acl.entries()) {
    if (
      typeof entry?.scheme !== 'string' ||
      typeof entry.id !== 'string' ||
      !Number.isInteger(entry.perms) ||
      entry.perms < 0 ||
      entry.perms > Perms.ALL
    ) {
      throw invalid(`entry ${index} needs a string scheme and id and perms in 0..31`);
    }
    if (entry.scheme === 'auth') {
      // Only providers that prove an identity count: the implicit `ip` id does not.
      const ids = authIds.filter((a) => a.scheme !== 'ip');
      if (ids.length === 0) {
        throw invalid(`entry ${index}: the 'auth' scheme needs a session that has called addAuth`);
      }
      for (const id of ids) add({ scheme: id.scheme, id: id.id, perms: entry.perms });
    } else if (isValidId(entry.scheme, entry.id)) {
      add({ scheme: entry.scheme, id: entry.id, perms: entry.perms });
    } else {
      throw invalid(
        `entry ${index}: ${JSON.stringify(`${entry.scheme}:${entry.id}`)} is not a valid id`,
      );
    }
  }
  return out;
}

/** Whether a session holding `authIds` has any of the bits in `perm` on a node with `acl`. */
export function aclAllows(acl: readonly Acl[], perm: number, authIds: readonly AuthId[]): boolean {
  if (acl.length === 0) return true; // ZooKeeper treats an ACL-less node as open
  for (const entry of acl) {
    if ((entry.perms & perm) === 0) continue;
    if (entry.scheme === 'world' && entry.id === 'anyone') return true;
    for (const id of authIds) {
      if (id.scheme !== entry.scheme) continue;
      if (id.scheme === 'ip' ? ipMatches(entry.id, id.id) : id.id === entry.id) return true;
    }
  }
  return false;
}

/**
 * What getAcl shows a caller without ADMIN (ZooKeeper 3.6+): digest hashes are masked as
 * `user:x`, so READ alone does not leak password hashes.
 */
export function redactDigests(acl: readonly Acl[]): Acl[] {
  return acl.map((entry) =>
    entry.scheme === 'digest' ? { ...entry, id: entry.id.replace(/:.*$/s, ':x') } : { ...entry },
  );
}

/** Adds `id` to a session's identities unless it is there already. */
export function addAuthId(ids: AuthId[], id: AuthId): void {
  if (!ids.some((a) => a.scheme === id.scheme && a.id === id.id)) ids.push(id);
}
