import { type Acl, Perms, permsToShort } from '../contract/acl.js';
import { ZoottError } from '../contract/errors.js';

/*
 * Who a world's nodes must serve, read off an ACL, and what another node's ACL denies them.
 * ZooKeeper grants a permission when an entry of the node's ACL holds it for `world:anyone`
 * or for exactly the caller's identity (`digest:user:hash`, ...); that is what is evaluated
 * here, against the identities a world's ACL names.
 */

/** What zoott does with a world's nodes: create, delete, read, write, and lock them down. */
const RUNS_A_WORLD = Perms.CREATE | Perms.DELETE | Perms.READ | Perms.WRITE;

/**
 * The identities a world runs as, with the permissions the world's ACL gives each: its entries
 * that may create, delete, read and write (the world's owners; an entry that only reads is a
 * guest, not someone zoott runs as). An ACL without any such entry: all of its entries.
 */
export function principalOf(worldAcl: readonly Acl[]): Acl[] {
  const owners = worldAcl.filter((e) => (e.perms & RUNS_A_WORLD) === RUNS_A_WORLD);
  return (owners.length > 0 ? owners : worldAcl).map((e) => ({ ...e }));
}

/** Whether `acl` grants `perm` to the identity `who` (`world:anyone` counts for everyone). */
function grants(acl: readonly Acl[], who: Acl, perm: number): boolean {
  return acl.some(
    (entry) =>
      (entry.perms & perm) !== 0 &&
      ((entry.scheme === 'world' && entry.id === 'anyone') ||
        (entry.scheme === who.scheme && entry.id === who.id)),
  );
}

/** Whether two ACLs grant the same (scheme, id, perms) entries, in any order. */
export function sameAcl(acl: readonly Acl[], other: readonly Acl[]): boolean {
  const key = (e: Acl) => `${e.scheme}\u0000${e.id}\u0000${e.perms}`;
  const left = new Set(acl.map(key));
  const right = new Set(other.map(key));
  return left.size === right.size && [...left].every((k) => right.has(k));
}

/** One identity of a principal and the permissions a node's ACL denies it. */
export interface Denied {
  who: Acl;
  /** Missing permissions, a mask. */
  perms: number;
}

/**
 * The permissions `nodeAcl` denies to each identity of `principal` (only those it denies
 * something; empty when the node serves the world). `'unreadable'` (this session may not
 * even read the ACL) denies everything but what it cannot know.
 */
export function deniedBy(
  nodeAcl: readonly Acl[] | 'unreadable',
  principal: readonly Acl[],
): Denied[] {
  const out: Denied[] = [];
  for (const who of principal) {
    let missing = 0;
    for (const bit of [Perms.CREATE, Perms.DELETE, Perms.READ, Perms.WRITE, Perms.ADMIN])
      if ((who.perms & bit) !== 0 && (nodeAcl === 'unreadable' || !grants(nodeAcl, who, bit)))
        missing |= bit;
    if (missing !== 0) out.push({ who, perms: missing });
  }
  return out;
}

/** The entries of `acl` that may change it (ADMIN): who can fix a node the world cannot. */
export function adminsOf(acl: readonly Acl[]): Acl[] {
  return acl.filter((e) => (e.perms & Perms.ADMIN) !== 0);
}

/** `digest:alice:… cdrwa` (the hash left out: it is noise to people). */
export function showEntry(entry: Acl): string {
  const id = entry.scheme === 'digest' ? entry.id.replace(/:.*/s, ':…') : entry.id;
  return `${entry.scheme}:${id} ${permsToShort(entry.perms) || '-'}`;
}

/** An ACL as people read it, hashes left out; `(empty)` for none. */
export function showAclShort(acl: readonly Acl[] | 'unreadable'): string {
  if (acl === 'unreadable') return 'an ACL these credentials may not read';
  return acl.length === 0 ? '(empty)' : acl.map(showEntry).join(', ');
}

/** What the world's principal lacks on a node, in words: `digest:alice:… lacks cdwa`. */
export function showDenied(denied: readonly Denied[]): string {
  return denied
    .map(
      (lack) =>
        `${showEntry({ ...lack.who, perms: 0 }).replace(/ -$/, '')} lacks ${permsToShort(lack.perms)}`,
    )
    .join('; ');
}

/**
 * An ACL as zkCli.sh's `setAcl` takes it: `scheme:id:perms,...`. A digest read without ADMIN
 * comes back as `user:x` (ZooKeeper hides the hash): it is written `user:<its hash>`, for
 * whoever runs the command to fill in; an ACL not known here is `<the world's ACL>`.
 */
export function zkCliAcl(acl: readonly Acl[]): string {
  if (acl.length === 0) return "<the world's ACL>";
  return acl
    .map((entry) => {
      const id =
        entry.scheme === 'digest' && entry.id.endsWith(':x')
          ? `${entry.id.slice(0, -1)}<its hash>`
          : entry.id;
      return `${entry.scheme}:${id}:${permsToShort(entry.perms)}`;
    })
    .join(',');
}

/** The ADMIN-level change only a node's admins (or a ZooKeeper super user) can make. */
export interface AdminFix {
  /** The node, relative to the namespace (the connect string's chroot). */
  path: string;
  /** The ACL it must get. */
  acl: Acl[];
  /** Whether everything below it needs it too (`setAcl -R`). */
  recursive: boolean;
  /** Who may run it: the entries holding ADMIN on it (none: a super user only). */
  admins: Acl[];
}

/**
 * The zkCli.sh command that applies `fix`, with the node's full path under `chroot` (the
 * connect string's, `''` for none), and who can run it.
 */
export function adminCommand(fix: AdminFix, chroot = ''): string {
  const base = chroot.replace(/\/$/, '');
  const full = fix.path === '/' ? base || '/' : `${base}${fix.path}`;
  const who =
    fix.admins.length > 0
      ? `as ${fix.admins.map((a) => showEntry({ ...a, perms: 0 }).replace(/ -$/, '')).join(' or ')} (ADMIN on it) or a ZooKeeper super user`
      : 'as a ZooKeeper super user (nobody holds ADMIN on it)';
  return `setAcl ${fix.recursive ? '-R ' : ''}${full} ${zkCliAcl(fix.acl)}   (zkCli.sh, ${who})`;
}

/**
 * A node zoott needs that these credentials cannot create, write or change, and cannot fix:
 * only its admins or a super user can ({@link fix}). NO_AUTH, so the CLI exits 4. The message
 * ends with the command, its path inside the connect string's chroot; {@link reason} is the
 * message without it (the CLI prints the command with the chroot's path).
 */
export class NamespaceError extends ZoottError {
  constructor(
    readonly reason: string,
    readonly fix: AdminFix,
  ) {
    super(
      'NO_AUTH',
      `${reason}; an administrator must run: ${adminCommand(fix)} (the path is inside the connect string's chroot)`,
      { path: fix.path, op: 'init' },
    );
    this.name = 'NamespaceError';
  }
}
