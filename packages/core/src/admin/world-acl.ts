import { type Acl, permsToShort } from '../contract/acl.js';
import type { Coordinator } from '../contract/coordinator.js';
import { sameAcl } from '../engine/acl-principal.js';
import { codeOf } from '../engine/errors.js';
import { AREAS } from '../engine/layout.js';
import { worldAreaNodes } from '../engine/world-nodes.js';
import { worldRoot } from '../tree/keys.js';

/** A node whose ACL is not the one asked for. */
export interface AclMismatch {
  path: string;
  acl: Acl[];
}

export { sameAcl } from '../engine/acl-principal.js';

/** `digest:alice:… cdrwa, world:anyone r`: an ACL as people read it. */
export function describeAcl(acl: readonly Acl[]): string {
  if (acl.length === 0) return '(empty)';
  return acl.map((e) => `${e.scheme}:${e.id} ${permsToShort(e.perms) || '-'}`).join(', ');
}

/**
 * The nodes that make a world and that `init` creates: its node in each area
 * (`/zoott_p/<world>`, ..., `/zoott_~races/<world>`) and, last, the tree root. Each holds the
 * rest of the world below it; the shared `/zoott_<area>` nodes belong to no world.
 */
export function worldTops(world: string): string[] {
  return [...worldAreaNodes(world), worldRoot(world)];
}

/**
 * The world's top nodes and their buckets whose ACL differs from `expected`. Missing nodes
 * are not reported (init creates them). ZooKeeper reads an ACL only for a client with READ
 * or ADMIN on the node, so a world locked to someone else fails here with NO_AUTH.
 */
export async function worldAclMismatches(
  coordinator: Coordinator,
  world: string,
  expected: readonly Acl[],
): Promise<AclMismatch[]> {
  const tops = worldTops(world);
  const buckets = await Promise.all(
    tops
      .slice(0, AREAS.length) // the bucketed areas come first
      .map((top) =>
        coordinator.children(top).then(
          (names) => names.map((n) => `${top}/${n}`),
          (err) =>
            codeOf(err) === 'NO_NODE' || codeOf(err) === 'NO_AUTH' ? [] : Promise.reject(err),
        ),
      ),
  );
  const paths = [...tops, ...buckets.flat()];
  const found = await Promise.all(
    paths.map((path) =>
      coordinator.getAcl(path).then(
        ({ acl }) => ({ path, acl }),
        (err) => (codeOf(err) === 'NO_NODE' ? null : Promise.reject(err)),
      ),
    ),
  );
  return found.filter((f): f is AclMismatch => f !== null && !sameAcl(f.acl, expected));
}

/** What {@link lockDownWorld} did. */
export interface LockDownReport {
  world: string;
  acl: Acl[];
  /** Nodes looked at. */
  checked: number;
  /** Nodes whose ACL was set, with the ACL they had. */
  changed: { path: string; before: Acl[] }[];
}

/** More for `lockDownWorld` to lock, and where it reports its progress. */
export interface LockDownOptions {
  /** More subtrees to lock with the world (a world's reply paths, say), before its tops. */
  extraRoots?: readonly string[];
  /** Called now and then with the running totals, for a progress line. */
  onProgress?: (checked: number, changed: number) => void;
}

/**
 * Sets `acl` on every node of a world: its node in every area with everything below it
 * (buckets, entries, records, claims, registrations, progress, quarantine, schedules, rate
 * limits, elections, reply paths and race state), the tree, and `extraRoots`. Only nodes whose ACL differs are
 * written, so a second run changes nothing (idempotent).
 *
 * Children are done before their parent and the tree root last, so an interrupted run
 * leaves the tops open and {@link worldAclMismatches} (what `init` checks) still reports the
 * world as not locked; running it again finishes the job. After a parent is locked its
 * children are listed once more: a node created under it while its children were being done
 * (before the parent refused strangers) is locked too.
 */
export async function lockDownWorld(
  coordinator: Coordinator,
  world: string,
  acl: readonly Acl[],
  options: LockDownOptions = {},
): Promise<LockDownReport> {
  const report: LockDownReport = { world, acl: [...acl], checked: 0, changed: [] };
  const tick = () => options.onProgress?.(report.checked, report.changed.length);
  const lockNode = async (path: string): Promise<boolean> => {
    let got: Awaited<ReturnType<Coordinator['getAcl']>>;
    try {
      got = await coordinator.getAcl(path);
    } catch (err) {
      if (codeOf(err) === 'NO_NODE') return false;
      throw err;
    }
    report.checked++;
    if (report.checked % 200 === 0) tick();
    if (sameAcl(got.acl, acl)) return true;
    try {
      await coordinator.setAcl(path, acl, got.stat.aversion);
    } catch (err) {
      if (codeOf(err) === 'NO_NODE') return false;
      // Someone changed it meanwhile: look again.
      if (codeOf(err) === 'BAD_VERSION') return lockNode(path);
      throw err;
    }
    report.changed.push({ path, before: got.acl });
    return true;
  };
  const listOrEmpty = (path: string) =>
    coordinator
      .children(path)
      .catch((err) => (codeOf(err) === 'NO_NODE' ? [] : Promise.reject(err)));
  const lockSubtree = async (path: string): Promise<void> => {
    const first = await listOrEmpty(path);
    await inBatches(first, (n) => lockSubtree(join(path, n)));
    if (!(await lockNode(path))) return;
    const seen = new Set(first);
    const late = (await listOrEmpty(path)).filter((n) => !seen.has(n));
    await inBatches(late, (n) => lockSubtree(join(path, n)));
  };
  for (const root of options.extraRoots ?? []) await lockSubtree(root);
  // Tops last, the tree root very last: they are what says "this world is locked".
  for (const top of worldTops(world)) await lockSubtree(top);
  tick();
  return report;
}

const join = (parent: string, name: string) => (parent === '/' ? `/${name}` : `${parent}/${name}`);

/** Runs `fn` over `items`, a bounded number at a time (one bucket can hold thousands). */
async function inBatches<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  const BATCH = 32;
  for (let i = 0; i < items.length; i += BATCH)
    await Promise.all(items.slice(i, i + BATCH).map(fn));
}
