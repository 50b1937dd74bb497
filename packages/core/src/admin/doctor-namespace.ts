import { type Acl, Perms, permsToShort } from '../contract/acl.js';
import {
  adminCommand,
  adminsOf,
  deniedBy,
  sameAcl,
  showAclShort,
  showDenied,
  showEntry,
} from '../engine/acl-principal.js';
import { SHARED_ACL, sharedParents, withSharing, worldSideNodes } from '../engine/world-nodes.js';
import { AREA_NAMES } from '../tree/areas.js';
import type { Diagnosis } from './doctor-findings.js';

/*
 * The nodes a world needs beside its tasks: the area nodes every world of the namespace
 * shares, and the world's own node in each area. What `init` makes, so what it reports is
 * either a world made by zoott 0.1.0 (`init` makes the missing nodes and gives the shared
 * ones their ACL), or a node someone else made or changed (only its admins can fix it).
 */

/** What a world needs of a shared node: to make its node in it, and to list it. */
const SHARED_USE = Perms.CREATE | Perms.READ;

/** The shared area nodes, then which of the world's nodes are missing. */
export async function diagnoseNamespace(diagnosis: Diagnosis, chroot: string): Promise<void> {
  const world = diagnosis.ctx.layout.world;
  const missing: string[] = [];
  for (const path of sharedParents())
    if (!(await sharedNode(diagnosis, path, chroot))) missing.push(path);
  if (missing.length > 0) await namespaceRoot(diagnosis, missing, chroot);
  for (const path of worldSideNodes(world)) {
    diagnosis.tick();
    if ((await diagnosis.aclOf(path)) === null)
      diagnosis.add(
        'missing',
        path,
        `the world has no ${path} (made by zoott 0.1.0, or removed): \`zoott init ${world}\` makes it, with the world's ACL`,
        'none',
      );
  }
  // Not read by any other part: what `--repair` moves is kept there.
  await diagnosis.checkAcl(diagnosis.ctx.layout.areaRoot(AREA_NAMES.quarantine));
}

/**
 * The namespace root (the chroot), when shared area nodes are missing: whether the world's
 * principal may create them there. zoott never changes a chroot's ACL; its admins can.
 */
async function namespaceRoot(diagnosis: Diagnosis, missing: readonly string[], chroot: string) {
  const acl = await diagnosis.aclOf('/');
  diagnosis.tick();
  if (acl === null) return;
  const principal = (diagnosis.principal ?? []).map((p) => ({ ...p, perms: Perms.CREATE }));
  const denied = deniedBy(acl, principal);
  if (denied.length === 0) return;
  const fix = {
    path: '/',
    acl: acl === 'unreadable' ? [...SHARED_ACL] : withSharing(acl),
    recursive: false,
    admins: acl === 'unreadable' ? [] : adminsOf(acl),
  };
  diagnosis.add(
    'squatted',
    '/',
    `the namespace root (the connect string's chroot) has ${showAclShort(acl)}: the world's principal ${showDenied(denied)} there, so the missing ${missing.join(', ')} cannot be made; only its admins can change that`,
    'admin',
    undefined,
    adminCommand(fix, chroot),
  );
}

/** One shared area node's findings; `false` when it is missing. */
async function sharedNode(diagnosis: Diagnosis, path: string, chroot: string): Promise<boolean> {
  const world = diagnosis.ctx.layout.world;
  const acl = await diagnosis.aclOf(path);
  diagnosis.tick();
  if (acl === null) {
    diagnosis.add(
      'missing',
      path,
      `${path}, shared by every world of the namespace, is missing: \`zoott init ${world}\` makes it (world:anyone cr)`,
      'none',
    );
    return false;
  }
  if (acl !== 'unreadable' && sameAcl(acl, SHARED_ACL)) return true;
  const fix = {
    path,
    acl: [...SHARED_ACL],
    recursive: false,
    admins: acl === 'unreadable' ? [] : adminsOf(acl),
  };
  const principal = (diagnosis.principal ?? []).map((p) => ({ ...p, perms: SHARED_USE }));
  const denied = deniedBy(acl, principal);
  if (denied.length > 0 || acl === 'unreadable') {
    diagnosis.add(
      'squatted',
      path,
      `${path}, shared by every world of the namespace, has ${showAclShort(acl)}: the world's principal ${showDenied(denied)} here, so no node of the world missing from it can be made; only its admins can change that`,
      'admin',
      undefined,
      adminCommand(fix, chroot),
    );
    return true;
  }
  // It serves this world, but others may be kept out of it now, or later by whoever may
  // change it, who may also delete an empty world node in it and make it again as theirs.
  const anyone = { scheme: 'world', id: 'anyone', perms: SHARED_USE };
  const creators = acl.filter((e) => (e.perms & Perms.CREATE) !== 0).map(who);
  const changers = acl.filter((e) => (e.perms & ~SHARED_USE) !== 0);
  const why =
    deniedBy(acl, [anyone]).length > 0
      ? `only ${creators.join(', ')} may create in it, so no other principal can make a world here`
      : `${changers.map((e) => `${who(e)} may ${permsToShort(e.perms & ~SHARED_USE)}`).join(', ')}, so could lock the other worlds out of it or take an empty world node in it`;
  const ours = (diagnosis.principal ?? []).some(
    (p) => deniedBy(acl, [{ ...p, perms: Perms.ADMIN }]).length === 0,
  );
  diagnosis.add(
    'shared-acl',
    path,
    `${path}, shared by every world of the namespace, has ${showAclShort(acl)}: ${why}; ${
      ours
        ? `\`zoott init ${world}\` gives it world:anyone cr`
        : 'only its admins can give it world:anyone cr'
    }`,
    ours ? 'none' : 'admin',
    undefined,
    ours ? undefined : adminCommand(fix, chroot),
  );
  return true;
}

/** An ACL entry's identity, as people read it. */
const who = (e: Acl) => showEntry({ ...e, perms: 0 }).replace(/ -$/, '');

/**
 * The world's node in the reply or race area and everything below it (exchanges, reply
 * directories, results; race state): each node's ACL, as a reply path's.
 */
export async function diagnoseSubtree(diagnosis: Diagnosis, path: string): Promise<void> {
  await diagnosis.checkAcl(path, 'reply-acl');
  diagnosis.tick();
  for (const name of await diagnosis.list(path))
    await diagnoseSubtree(diagnosis, `${path}/${name}`);
}
