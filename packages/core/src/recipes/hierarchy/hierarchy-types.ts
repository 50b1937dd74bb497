import { ZoottError } from '../../contract/errors.js';
import { permToLong } from '../acl/perms.js';
import { reasonOf } from '../support/reason.js';

/**
 * ACL of a hierarchy node: digest user → `cdrwa` letters, e.g. `{ xp: 'cdrwa', foo: 'rw' }`.
 * A key with a ':' is a literal `scheme:id` instead (`'world:anyone': 'r'`,
 * `'ip:10.0.0.0/8': 'rw'`), so ACLs that are not digests survive an export/import.
 */
export type HierarchyAcl = Record<string, string>;

/**
 * One node of a zkutil hierarchy. Reserved keys:
 * - `__val__`: the value, stored as JSON (default `{}`);
 * - `__acl__`: the node's ACL (default: the parent's ACL);
 * - `__raw__`: zoott only — the data as UTF-8 text, for nodes whose data is not JSON (export
 *   writes it so such nodes survive a round trip).
 * Every other key is a child node (an object, or `null`/`{}` for a node with defaults).
 */
export interface HierarchyNode {
  __val__?: unknown;
  __acl__?: HierarchyAcl;
  __raw__?: string;
  [child: string]: unknown;
}

/** A tree to import: child name → node. It may carry reserved keys for the root node itself. */
export type Hierarchy = HierarchyNode;

/** Keys that are attributes of a node, not children. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__val__', '__acl__', '__raw__']);

function bad(where: string, why: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', `hierarchy ${where}: ${why}`, { field: where });
}

/** The children of a node, as `[name, node]` with `null` children read as `{}`. */
export function childrenOf(node: HierarchyNode): Array<[string, HierarchyNode]> {
  return Object.entries(node)
    .filter(([k]) => !RESERVED_KEYS.has(k))
    .map(([k, v]) => [k, (v ?? {}) as HierarchyNode]);
}

/**
 * Checks a hierarchy's shape before anything is written: nodes are objects, names are valid
 * node names, `__acl__` maps names to `cdrwa` letters, `__raw__` is text.
 *
 * @throws ZoottError INVALID_CONFIG naming the offending node path.
 */
export function validateHierarchy(hierarchy: unknown, where = '/'): asserts hierarchy is Hierarchy {
  if (typeof hierarchy !== 'object' || hierarchy === null || Array.isArray(hierarchy)) {
    throw bad(where, `a node must be an object, got ${JSON.stringify(hierarchy)}`);
  }
  const node = hierarchy as HierarchyNode;
  if ('__acl__' in node && node.__acl__ !== undefined) {
    const acl = node.__acl__ as unknown;
    if (typeof acl !== 'object' || acl === null || Array.isArray(acl)) {
      throw bad(where, '__acl__ must map user names to permissions, e.g. { xp: "cdrwa" }');
    }
    for (const [user, perms] of Object.entries(acl)) {
      if (typeof perms !== 'string') throw bad(where, `__acl__.${user} must be a string of cdrwa`);
      try {
        permToLong(perms);
      } catch (err) {
        throw bad(where, `__acl__.${user}: ${reasonOf(err)}`);
      }
    }
  }
  if (node.__raw__ !== undefined && typeof node.__raw__ !== 'string') {
    throw bad(where, '__raw__ must be a string');
  }
  if (node.__raw__ !== undefined && node.__val__ !== undefined) {
    throw bad(where, 'give either __val__ or __raw__, not both');
  }
  for (const [name, child] of Object.entries(node)) {
    if (RESERVED_KEYS.has(name)) continue;
    const path = where === '/' ? `/${name}` : `${where}/${name}`;
    if (name === '' || name.includes('/') || name === '.' || name === '..') {
      throw bad(path, `${JSON.stringify(name)} is not a valid node name`);
    }
    validateHierarchy(child ?? {}, path);
  }
}
