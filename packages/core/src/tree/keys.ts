import { ZoottError } from '../contract/errors.js';
import { WORLD_PREFIX } from './areas.js';
import { resolveLimits, type TaskLimits } from './limits.js';
import { validateTaskName, validateWorldName } from './names.js';
import { show } from './show.js';

/**
 * A task's identity: the names on its path from the world root, root first.
 * `['requestFile_a', 'downloadFile_a']` is `/zoott_<world>/requestFile_a/downloadFile_a`.
 * The empty key denotes the world root itself (it has a tree path but no pending name).
 */
export type TaskKey = readonly string[];

/** Joins a key's names into one pending-area node name. Task names can never contain it. */
export const KEY_SEPARATOR = '|';

/**
 * Checks every name of `key` (field `key[i]`) and its depth against `maxDepth`.
 * `allowRoot` admits the empty key.
 */
export function validateKey(
  key: unknown,
  limits?: Partial<TaskLimits>,
  allowRoot = false,
): TaskKey {
  const lim = resolveLimits(limits);
  if (!Array.isArray(key))
    throw new ZoottError('INVALID_TASK', `key must be an array of names, got ${show(key)}`, {
      field: 'key',
    });
  if (key.length === 0 && !allowRoot)
    throw new ZoottError('INVALID_TASK', 'key must hold at least one name', { field: 'key' });
  if (key.length > lim.maxDepth)
    throw new ZoottError(
      'INVALID_TASK',
      `key is ${key.length} levels deep, more than the limit of ${lim.maxDepth}`,
      { field: 'key' },
    );
  for (let i = 0; i < key.length; i++) validateTaskName(key[i], `key[${i}]`, lim);
  return key as TaskKey;
}

/** The pending-area name of a task: its names joined by `|` (`a|b|c`). */
export function encodeKey(key: TaskKey, limits?: Partial<TaskLimits>): string {
  return validateKey(key, limits).join(KEY_SEPARATOR);
}

/**
 * The key named by a pending-area name. Throws `INVALID_TASK` (field `key[i]`, or `key`)
 * on an empty string, an empty segment (`a||b`, `|a`, `a|`) or an invalid name.
 * Exact inverse of {@link encodeKey}.
 */
export function decodeKey(encoded: string, limits?: Partial<TaskLimits>): TaskKey {
  if (typeof encoded !== 'string' || encoded.length === 0)
    throw new ZoottError(
      'INVALID_TASK',
      `pending name ${show(encoded)}: must be a non-empty string`,
      {
        field: 'key',
      },
    );
  return Object.freeze(validateKey(encoded.split(KEY_SEPARATOR), limits).slice());
}

/** The tree root of a world: `/zoott_<world>`. Validates the world name. */
export function worldRoot(world: string): string {
  return `${WORLD_PREFIX}${validateWorldName(world)}`;
}

/**
 * The key of a node of the world's tree. `path` must be the world root or lie below it;
 * the world root gives the empty key. Throws `INVALID_TASK` (field `path`) otherwise.
 */
export function treePathToKey(world: string, path: string, limits?: Partial<TaskLimits>): TaskKey {
  const root = worldRoot(world);
  if (path === root) return Object.freeze([]);
  if (typeof path !== 'string' || !path.startsWith(`${root}/`))
    throw new ZoottError('INVALID_TASK', `path ${show(path)}: not inside the tree ${root}`, {
      field: 'path',
    });
  const names = path.slice(root.length + 1).split('/');
  return Object.freeze(validateKey(names, limits).slice());
}

/** The tree path of a key in a world (the empty key gives the world root). */
export function keyToTreePath(world: string, key: TaskKey, limits?: Partial<TaskLimits>): string {
  const root = worldRoot(world);
  validateKey(key, limits, true);
  return key.length === 0 ? root : `${root}/${key.join('/')}`;
}

/**
 * The proper ancestors of a key, ROOT FIRST and nearest parent LAST:
 * `ancestorsOf(['a','b','c'])` is `[['a'], ['a','b']]`. The key itself is not included,
 * nor is the world root (the empty key).
 */
export function ancestorsOf(key: TaskKey): TaskKey[] {
  const out: TaskKey[] = [];
  for (let i = 1; i < key.length; i++) out.push(key.slice(0, i));
  return out;
}

/** The key of the parent task, or `null` for a top-level task (or the root). */
export function parentKey(key: TaskKey): TaskKey | null {
  return key.length <= 1 ? null : key.slice(0, -1);
}

/** Whether two keys name the same task. */
export function keysEqual(left: TaskKey, right: TaskKey): boolean {
  return left.length === right.length && left.every((name, i) => name === right[i]);
}

/** Whether `ancestor` is a proper ancestor of `key`. */
export function isAncestorKey(ancestor: TaskKey, key: TaskKey): boolean {
  return ancestor.length < key.length && ancestor.every((name, i) => name === key[i]);
}
