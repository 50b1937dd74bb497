import { type Acl, Perms } from '../contract/acl.js';
import type { Coordinator } from '../contract/coordinator.js';
import { AREA_NAMES, WORLD_AREAS } from '../tree/areas.js';
import { validateWorldName } from '../tree/names.js';
import {
  adminsOf,
  deniedBy,
  NamespaceError,
  principalOf,
  sameAcl,
  showAclShort,
  showDenied,
} from './acl-principal.js';
import { codeOf } from './errors.js';
import { areaParent } from './layout.js';

/*
 * A namespace (the connect string's chroot) is shared by the worlds of everyone who may
 * write it. Its root and the area nodes `/zoott_<area>` belong to no world; every other
 * node belongs to exactly one. `init` makes a world's node in every area, with the world's
 * ACL, so no process of one world ever creates a node another world needs (the first
 * worker of a locked world made `/zoott_leaders` with its own ACL, and the open world's
 * scheduler could never enter its election again).
 */

/**
 * ACL of a node every world shares (an area node, and a chroot zoott creates): anyone may
 * create their world's node in it and list it; nobody, its creator included, may delete in
 * it or change its ACL. So nobody can lock the other worlds out of it, nor delete another
 * world's (empty) node and make it again as their own.
 */
export const SHARED_ACL: readonly Acl[] = Object.freeze([
  { scheme: 'world', id: 'anyone', perms: Perms.CREATE | Perms.READ },
]);

/** The area nodes every world shares, `/zoott_<area>`, in the order `init` makes them. */
export function sharedParents(): string[] {
  return WORLD_AREAS.map(areaParent);
}

/** The role of the scheduler's election (`/zoott_leaders/<world>/scheduler`). */
export const SCHEDULER_ELECTION = 'scheduler';

/** The election the workers of `world` hold to pick the one scheduler. */
export function schedulerElectionPath(world: string): string {
  return `${areaParent(AREA_NAMES.leaders)}/${validateWorldName(world)}/${SCHEDULER_ELECTION}`;
}

/** The world's node in each area, `/zoott_<area>/<world>`, in {@link WORLD_AREAS} order. */
export function worldAreaNodes(world: string): string[] {
  validateWorldName(world);
  return WORLD_AREAS.map((a) => `${areaParent(a)}/${world}`);
}

/**
 * Every node a world needs beside its tree and buckets, parents first: its node in each area,
 * and its scheduler election.
 */
export function worldSideNodes(world: string): string[] {
  return [...worldAreaNodes(world), schedulerElectionPath(world)];
}

/** What {@link ensureNamespace} found and did to the shared area nodes. */
export interface NamespaceReport {
  /** Made now, with {@link SHARED_ACL}. */
  created: string[];
  /** Set to {@link SHARED_ACL} (made by zoott 0.1.0 with its first creator's ACL). */
  opened: { path: string; before: Acl[] }[];
  /** With another ACL that these credentials may not change. */
  kept: { path: string; acl: Acl[] | 'unreadable' }[];
}

const parentOf = (path: string) => path.slice(0, path.lastIndexOf('/')) || '/';

/** The ACL of `path`, `'unreadable'` when this session may not read it. */
async function aclOrUnreadable(
  coordinator: Coordinator,
  path: string,
): Promise<Acl[] | 'unreadable'> {
  try {
    return (await coordinator.getAcl(path)).acl;
  } catch (err) {
    if (codeOf(err) === 'NO_AUTH') return 'unreadable';
    throw err;
  }
}

/** `acl` plus create and read for everyone: what a namespace root every world shares needs. */
export function withSharing(acl: readonly Acl[]): Acl[] {
  const anyone = acl.find((e) => e.scheme === 'world' && e.id === 'anyone');
  const rest = acl.filter((e) => e !== anyone).map((e) => ({ ...e }));
  const perms = (anyone?.perms ?? 0) | Perms.CREATE | Perms.READ;
  return [{ scheme: 'world', id: 'anyone', perms }, ...rest];
}

/**
 * The refusal of a create of `path` by its parent: which node, its ACL, and what only its
 * admins can do about it. The namespace root is the connect string's chroot.
 */
export async function refusedBy(
  coordinator: Coordinator,
  path: string,
  /** The ACL a world's node that refuses it must get back (the world's), when known. */
  worldAcl?: readonly Acl[],
): Promise<NamespaceError> {
  const parent = parentOf(path);
  const acl = await aclOrUnreadable(coordinator, parent);
  const admins = acl === 'unreadable' ? [] : adminsOf(acl);
  if (parent === '/')
    return new NamespaceError(
      `the namespace root (the connect string's chroot) has ${showAclShort(acl)}, which does not let these credentials create ${path} in it; every world of the namespace needs to create its nodes there`,
      {
        path: '/',
        acl: acl === 'unreadable' ? [...SHARED_ACL] : withSharing(acl),
        recursive: false,
        admins,
      },
    );
  if (sharedParents().includes(parent))
    return new NamespaceError(
      `${parent}, shared by every world of the namespace, has ${showAclShort(acl)}, which does not let these credentials create ${path} in it (someone made it with their own ACL first; zoott makes it world:anyone cr)`,
      { path: parent, acl: [...SHARED_ACL], recursive: false, admins },
    );
  return new NamespaceError(
    `${parent} has ${showAclShort(acl)}, which does not let these credentials create ${path} in it`,
    { path: parent, acl: [...(worldAcl ?? [])], recursive: true, admins },
  );
}

/**
 * Makes the shared area nodes that are missing, with {@link SHARED_ACL}, and gives that ACL
 * to those made with another (zoott 0.1.0 made them with the ACL of whoever came first) when
 * these credentials may change it. Others are left as they are (`kept`): they stop a world
 * only where its own node is missing, and {@link ensureWorldPath} then says so.
 *
 * @throws NamespaceError when the namespace root does not let these credentials create one.
 */
export async function ensureNamespace(coordinator: Coordinator): Promise<NamespaceReport> {
  const report: NamespaceReport = { created: [], opened: [], kept: [] };
  const existing: string[] = [];
  await Promise.all(
    sharedParents().map(async (path) => {
      try {
        await coordinator.create(path, undefined, { acl: SHARED_ACL });
        report.created.push(path);
      } catch (err) {
        if (codeOf(err) === 'NODE_EXISTS') existing.push(path);
        else if (codeOf(err) === 'NO_AUTH') throw await refusedBy(coordinator, path);
        else throw err;
      }
    }),
  );
  await Promise.all(existing.map((path) => shareIfAllowed(coordinator, path, report)));
  for (const list of [report.created, report.opened, report.kept])
    list.sort((a, b) => {
      const [left, right] = [
        typeof a === 'string' ? a : a.path,
        typeof b === 'string' ? b : b.path,
      ];
      return left < right ? -1 : left > right ? 1 : 0;
    });
  return report;
}

/** Gives `path` {@link SHARED_ACL} unless it has it, when this session may (ADMIN). */
async function shareIfAllowed(coordinator: Coordinator, path: string, report: NamespaceReport) {
  for (;;) {
    let got: Awaited<ReturnType<Coordinator['getAcl']>>;
    try {
      got = await coordinator.getAcl(path);
    } catch (err) {
      if (codeOf(err) !== 'NO_AUTH') throw err;
      report.kept.push({ path, acl: 'unreadable' });
      return;
    }
    if (sameAcl(got.acl, SHARED_ACL)) return;
    try {
      await coordinator.setAcl(path, SHARED_ACL, got.stat.aversion);
      report.opened.push({ path, before: got.acl });
      return;
    } catch (err) {
      const code = codeOf(err);
      if (code === 'NO_AUTH') {
        report.kept.push({ path, acl: got.acl });
        return;
      }
      // Changed meanwhile (another init): look again.
      if (code !== 'BAD_VERSION') throw err;
    }
  }
}

/**
 * Makes `path`, a world's node in an area (`/zoott_<area>/<world>`) or a node below it, with
 * `acl` (the session's default when absent) when it is missing, and what is missing above
 * it the same way, up to the shared area node, which is made with {@link SHARED_ACL}. Nothing
 * that exists is created again (ZooKeeper checks a create against the parent's ACL before it
 * looks for the node). For the world's node itself this is what `init` does, for a process
 * that finds it missing (a world made by zoott 0.1.0 that no newer `init` has touched): the
 * same node with the same ACL, never a shared node with a world's ACL.
 *
 * @throws NamespaceError when the node above does not let these credentials create it.
 */
export async function ensureWorldPath(
  coordinator: Coordinator,
  path: string,
  acl?: readonly Acl[],
  /** Told each node made here (not the shared one), parents first. */
  made?: string[],
): Promise<void> {
  for (let round = 0; ; round++) {
    try {
      await coordinator.create(path, undefined, acl ? { acl } : {});
      made?.push(path);
      return;
    } catch (err) {
      const code = codeOf(err);
      if (code === 'NODE_EXISTS') return;
      // A refused create of a node that exists is no refusal of what is needed.
      if (code === 'NO_AUTH') {
        if ((await coordinator.exists(path)) !== null) return;
        throw await refusedBy(coordinator, path, acl);
      }
      if (code !== 'NO_NODE' || round > 0) throw err;
    }
    const parent = parentOf(path);
    if (sharedParents().includes(parent)) await ensureShared(coordinator, parent);
    else await ensureWorldPath(coordinator, parent, acl, made);
  }
}

async function ensureShared(coordinator: Coordinator, path: string): Promise<void> {
  try {
    await coordinator.create(path, undefined, { acl: SHARED_ACL });
  } catch (err) {
    if (codeOf(err) === 'NO_AUTH') throw await refusedBy(coordinator, path);
    if (codeOf(err) !== 'NODE_EXISTS') throw err;
  }
}

/**
 * Makes every node of {@link worldSideNodes} that is missing (with the session's default
 * ACL, as `init` makes the rest of the world), and checks that those that exist serve the
 * world: that the identities of `worldAcl` (the ACL of its tree root) hold on each the
 * permissions the world's ACL gives them. A node someone else made first, with an ACL of
 * their own, would stop the world's schedules, replies, progress or registrations.
 *
 * @throws NamespaceError naming such a node, its ACL and the command only its admins can run.
 */
export async function ensureWorldSideNodes(
  coordinator: Coordinator,
  world: string,
  worldAcl: readonly Acl[],
  /** Told each node made here, parents first. */
  made?: string[],
): Promise<void> {
  const principal = principalOf(worldAcl);
  const [tops, deeper] = [worldAreaNodes(world), [schedulerElectionPath(world)]];
  for (const level of [tops, deeper])
    await Promise.all(
      level.map(async (path) => {
        const acl = await aclOrMissing(coordinator, path);
        if (acl === null) return ensureWorldPath(coordinator, path, undefined, made);
        const denied = deniedBy(acl, principal);
        if (denied.length === 0) return;
        throw new NamespaceError(
          `${path} exists with ${showAclShort(acl)}, which does not serve world ${world} (${showDenied(denied)}): someone else made it first, or changed its ACL`,
          {
            path,
            acl: [...worldAcl],
            recursive: true,
            admins: acl === 'unreadable' ? [] : adminsOf(acl),
          },
        );
      }),
    );
}

/** The ACL of `path`, `null` when it is missing, `'unreadable'` when this session may not read it. */
async function aclOrMissing(
  coordinator: Coordinator,
  path: string,
): Promise<Acl[] | 'unreadable' | null> {
  try {
    return await aclOrUnreadable(coordinator, path);
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return null;
    throw err;
  }
}
