import { ZoottError } from '../../contract/errors.js';

/** Orders two keys; negative when `a` sorts before `b`. */
export type KeyComparator<K> = (a: K, b: K) => number;

function naturalOrder<K>(a: K, b: K): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Whether locking `key` while holding `lockedKeys` is a *backward* lock: `key` sorts before
 * the right-most key already held. Processes that only ever lock forward (keys in ascending
 * order) cannot deadlock, because a cycle of waiters needs at least one backward lock; a
 * process that fails to take a backward lock should release everything and start over.
 *
 * Keys are compared with `<` (strings by UTF-16 code units, numbers numerically) unless a
 * comparator is given. Re-locking a key that is already held is a programming error.
 *
 * @throws ZoottError BAD_ARGUMENTS when `key` is already in `lockedKeys`.
 */
export function isBackwardLocking<K>(
  lockedKeys: Iterable<K>,
  key: K,
  compare: KeyComparator<K> = naturalOrder,
): boolean {
  let rightMost: K | undefined;
  let any = false;
  for (const held of lockedKeys) {
    if (compare(held, key) === 0) {
      throw new ZoottError('BAD_ARGUMENTS', `must not re-lock a key: ${String(key)}`, {
        field: 'key',
      });
    }
    if (!any || compare(held, rightMost as K) > 0) rightMost = held;
    any = true;
  }
  return any && compare(key, rightMost as K) < 0;
}
