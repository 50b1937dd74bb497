import { Perms, permsToShort } from '../../contract/acl.js';
import type { Coordinator } from '../../contract/coordinator.js';
import { isZoottError, ZoottError } from '../../contract/errors.js';
import { joinPath, utf8, validatePath } from '../../contract/paths.js';
import { type HierarchyAcl, type HierarchyNode, RESERVED_KEYS } from './hierarchy-types.js';

function dataToNode(data: Uint8Array): Pick<HierarchyNode, '__val__' | '__raw__'> {
  const text = utf8.decode(data);
  if (text !== '') {
    try {
      return { __val__: JSON.parse(text) };
    } catch {
      // Not JSON: keep the text, so importing the export writes the same bytes back.
    }
  }
  return { __raw__: text };
}

/**
 * zkutil's `export_hierarchy`: reads the subtree at `path` into a hierarchy node —
 * `__val__` (the data parsed as JSON), `__acl__` (digest users by name, other entries as
 * `scheme:id`, permissions as `cdrwa` letters) and one key per child, recursively, children
 * in name order. Data that is empty or not JSON is exported as `__raw__` text.
 *
 * Ephemeral nodes below `path` are left out: they belong to a live session (a worker's
 * registration, a claim, a lock), and imported they would come back persistent, owned by no
 * session and never removed.
 *
 * `initHierarchy(zk, exported, users, auth, { root })` recreates the tree, values and ACLs
 * (digest users need their passwords in `users`).
 *
 * @throws ZoottError INVALID_PATH for a relative path; NO_NODE if it does not exist.
 */
export async function exportHierarchy(zk: Coordinator, path: string): Promise<HierarchyNode> {
  const start = path.length > 1 ? path.replace(/\/+$/, '') : path;
  validatePath(start, 'exportHierarchy');
  const read = async (at: string, top: boolean): Promise<HierarchyNode | null> => {
    const [{ data, stat }, { acl }, children] = await Promise.all([
      zk.get(at),
      zk.getAcl(at),
      zk.children(at),
    ]);
    if (!top && stat.ephemeralOwner !== null) return null;
    const acls: HierarchyAcl = {};
    const masks = new Map<string, number>();
    for (const entry of acl) {
      const key =
        entry.scheme === 'digest'
          ? (entry.id.split(':')[0] as string)
          : `${entry.scheme}:${entry.id}`;
      masks.set(key, (masks.get(key) ?? 0) | entry.perms);
    }
    for (const [key, mask] of masks) acls[key] = mask === Perms.ALL ? 'cdrwa' : permsToShort(mask);
    const node: HierarchyNode = { ...dataToNode(data), __acl__: acls };
    for (const name of [...children].sort()) {
      if (RESERVED_KEYS.has(name)) {
        throw new ZoottError(
          'BAD_ARGUMENTS',
          `child ${name} collides with a reserved hierarchy key`,
          {
            path: at,
          },
        );
      }
      try {
        const child = await read(joinPath(at, name), false);
        if (child) node[name] = child;
      } catch (err) {
        // An ephemeral child may go while the export runs (its session ended).
        if (!isZoottError(err, 'NO_NODE')) throw err;
      }
    }
    return node;
  };
  return (await read(start, true)) as HierarchyNode;
}
