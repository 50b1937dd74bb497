import { type Acl, digestAcl, permsFromShort } from '../../contract/acl.js';
import { isZoottError, ZoottError } from '../../contract/errors.js';
import { encodeJson, joinPath, parentPath, utf8, validatePath } from '../../contract/paths.js';
import { readAuth, type ZkAuth } from '../conf/conf-values.js';
import {
  type ConnectFn,
  type CoordinatorSource,
  openCoordinator,
} from '../connection/coordinator-source.js';
import {
  childrenOf,
  type Hierarchy,
  type HierarchyAcl,
  type HierarchyNode,
  validateHierarchy,
} from './hierarchy-types.js';

/** Options of `initHierarchy`: where the tree goes, whether existing values are overwritten, how to connect. */
export interface InitHierarchyOptions {
  /** Where the top-level names are created (default `/`). */
  root?: string;
  /** Also overwrite the value of nodes that already exist (zkutil only resets their ACL). */
  updateExisting?: boolean;
  /** Opens a session when `source` is not a Coordinator (see `ConnectFn`). */
  connect?: ConnectFn;
}

function aclOf(map: HierarchyAcl, users: Readonly<Record<string, string>>, path: string): Acl[] {
  return Object.entries(map).map(([who, perms]) => {
    const colon = who.indexOf(':');
    if (colon > 0)
      return {
        scheme: who.slice(0, colon),
        id: who.slice(colon + 1),
        perms: permsFromShort(perms),
      };
    const password = users[who];
    if (typeof password !== 'string') {
      throw new ZoottError(
        'INVALID_CONFIG',
        `user ${JSON.stringify(who)} in the __acl__ of ${path} has no password in users`,
        { field: 'users', path },
      );
    }
    return digestAcl(who, password, perms);
  });
}

function dataOf(node: HierarchyNode): Uint8Array {
  return node.__raw__ !== undefined ? utf8.encode(node.__raw__) : encodeJson(node.__val__ ?? {});
}

const hasAttributes = (node: HierarchyNode) =>
  node.__val__ !== undefined || node.__acl__ !== undefined || node.__raw__ !== undefined;

/**
 * zkutil's `init_hierarchy`: creates a tree of nodes with values and ACLs.
 *
 * For each node, parents before children: the value is `__val__` as JSON (default `{}`), the
 * ACL is `__acl__` as digest entries built from `users` (default: the parent's current
 * ACL). A node that already exists gets its ACL reset (and its value too with
 * `updateExisting`). Reserved keys at the top level apply to the root node itself, so the
 * output of `exportHierarchy` can be imported as is under any root.
 *
 * @param source a Coordinator, or (with `options.connect`) a hosts string or config.
 * @param users password of every digest user named in an `__acl__`.
 * @param auth credentials added to the session before writing (`[scheme, user, password]` or
 *   `scheme:user:password`); on a passed-in Coordinator they stay for its session.
 * @returns how many nodes of the hierarchy (below the root) were created, and how many
 *   were there already.
 */
export async function initHierarchy(
  source: CoordinatorSource,
  hierarchy: Hierarchy,
  users: Readonly<Record<string, string>> = {},
  auth: ZkAuth | string | null = null,
  options: InitHierarchyOptions = {},
): Promise<{ created: number; existing: number }> {
  const root = options.root ?? '/';
  validatePath(root, 'initHierarchy');
  validateHierarchy(hierarchy, root);
  const credentials = readAuth(auth, 'auth');
  const { coordinator: zk, owned } = await openCoordinator(source, options.connect);
  try {
    if (credentials) await zk.addAuth(credentials[0], `${credentials[1]}:${credentials[2]}`);
    const tally = { created: 0, existing: 0 };
    const ensure = async (path: string, node: HierarchyNode): Promise<boolean> => {
      const acl = node.__acl__
        ? aclOf(node.__acl__, users, path)
        : (await zk.getAcl(parentPath(path))).acl;
      const data = dataOf(node);
      let created = false;
      if ((await zk.exists(path)) === null) {
        try {
          await zk.create(path, data, { acl });
          created = true;
        } catch (err) {
          if (!isZoottError(err, 'NODE_EXISTS')) throw err;
        }
      }
      if (!created) {
        await zk.setAcl(path, acl);
        if (options.updateExisting) await zk.set(path, data);
      }
      return created;
    };
    const walk = async (path: string, node: HierarchyNode): Promise<void> => {
      for (const [name, child] of childrenOf(node)) {
        const childPath = joinPath(path, name);
        if (await ensure(childPath, child)) tally.created++;
        else tally.existing++;
        await walk(childPath, child);
      }
    };
    if (hasAttributes(hierarchy)) {
      if (root !== '/') await ensure(root, hierarchy);
      // ZooKeeper's own root always exists and has no parent to inherit from.
      else if (hierarchy.__acl__) await zk.setAcl('/', aclOf(hierarchy.__acl__, users, '/'));
    }
    await walk(root, hierarchy);
    return tally;
  } finally {
    if (owned) await zk.close().catch(() => undefined);
  }
}
