import { type Acl, digestAcl, ZoottError } from '@zoott/core';
import { permsFromShort } from '@zoott/core/internal';

// ACL entries as zoott's programs take them (--acl, ZOOTT_ACL, `acl:` in the config file):
// the ids ZooKeeper's own schemes grant, written scheme:id:perms.

/** The forms an entry takes, for messages. */
export const ACL_ENTRY_FORMS =
  'user:password:perms (digest), digest:user:password:perms, x509:<certificate subject>:perms or sasl:<user>:perms';

/**
 * One ACL entry:
 * - `user:password:perms` or `digest:user:password:perms`: a digest user (the password may
 *   hold colons, the user not);
 * - `x509:<subject>:perms`: the client certificate whose subject (RFC 2253, as ZooKeeper's
 *   X509AuthenticationProvider gives it: `CN=alice,OU=ops,O=example`) is exactly that;
 * - `sasl:<user>:perms`: a SASL login of that user.
 * Permissions are `cdrwa` letters. Errors never show a password.
 *
 * @throws ZoottError INVALID_CONFIG naming `where`.
 */
export function parseAclEntry(entry: string, where: string): Acl {
  const bad = (why: string) =>
    new ZoottError('INVALID_CONFIG', `${where}: ${why}; expected ${ACL_ENTRY_FORMS}`, {
      field: where,
    });
  const last = entry.lastIndexOf(':');
  const perms = entry.slice(last + 1);
  const head = last === -1 ? '' : entry.slice(0, last);
  let mask: number;
  try {
    mask = permsFromShort(perms);
  } catch {
    throw bad(`the permissions ${JSON.stringify(perms)} are not cdrwa letters`);
  }
  if (mask === 0) throw bad('no permission given');
  const scheme = /^(x509|sasl):(.+)$/.exec(head);
  if (scheme) {
    const id = scheme[2] as string;
    if (scheme[1] === 'sasl' && id.includes(':')) throw bad('a SASL user has no colon');
    return { scheme: scheme[1] as string, id, perms: mask };
  }
  const rest = head.startsWith('digest:') && head.indexOf(':', 7) > 7 ? head.slice(7) : head;
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) throw bad('not one of the forms');
  return digestAcl(rest.slice(0, colon), rest.slice(colon + 1), mask);
}

/** An entry for display: a digest password hidden, x509 and sasl ids shown as they are. */
export function maskAclSpec(entry: string): string {
  if (/^(x509|sasl):/.test(entry)) return entry;
  const lead = entry.startsWith('digest:') && entry.split(':').length >= 4 ? 'digest:' : '';
  const parts = entry.slice(lead.length).split(':');
  if (parts.length < 3) return entry;
  return `${lead}${parts[0]}:****:${parts[parts.length - 1]}`;
}

/**
 * Entries from a list that was cut at every comma (a flag or variable of comma-separated
 * entries), put back together: an x509 subject holds commas (`CN=alice,O=example`), so a piece
 * that does not end in `:perms` belongs with the next one.
 */
export function rejoinAclEntries(pieces: readonly string[]): string[] {
  const out: string[] = [];
  let current: string | null = null;
  for (const piece of pieces) {
    current = current === null ? piece : `${current},${piece}`;
    if (current === 'open' || /:[cdrwa]+$/i.test(current)) {
      out.push(current);
      current = null;
    }
  }
  if (current !== null) out.push(current);
  return out;
}
