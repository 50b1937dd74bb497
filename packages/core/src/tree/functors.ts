import { isZoottError, ZoottError } from '../contract/errors.js';
import type { TaskLimits } from './limits.js';
import { validateTaskName } from './names.js';

/** Names the child queued under one matched parent. */
export type NameFunctor = (parentName: string, childName: string) => string;

/**
 * The default keeps the child's own name under every parent. That is the seed's behaviour
 * (no functor, no renaming), and with one matched parent, the common case, the pending
 * name stays exactly what the producer wrote (`requestFile_a|downloadFile_a`). Children of
 * different parents already have distinct paths, so identity never breaks the tree; it only
 * becomes ambiguous when several parents match, which {@link childNamesFor} reports.
 */
export const defaultNameFunctor: NameFunctor = (_parentName, childName) => childName;

/**
 * The child names to create under each of `parents` (same order). Every name is validated
 * (field `nameFunctor` when the functor produced it). Two equal names in one batch are an
 * error: the seed treats (name, type) as a task's identity in the tree, so a later parent
 * pattern for that name would match both; pass a functor that makes them unique.
 * A functor that throws is reported as `INVALID_TASK` with the thrown error as `cause`.
 */
export function childNamesFor(
  parents: readonly { name: string }[],
  childName: string,
  functor: NameFunctor = defaultNameFunctor,
  limits?: Partial<TaskLimits>,
): string[] {
  validateTaskName(childName, 'name', limits);
  const field = functor === defaultNameFunctor ? 'name' : 'nameFunctor';
  const byName = new Map<string, string>();
  return parents.map((parent) => {
    let name: unknown;
    try {
      name = functor(parent.name, childName);
    } catch (err) {
      if (isZoottError(err)) throw err;
      throw new ZoottError(
        'INVALID_TASK',
        `nameFunctor threw for parent ${JSON.stringify(parent.name)}: ${(err as Error)?.message ?? String(err)}`,
        { field: 'nameFunctor', cause: err },
      );
    }
    validateTaskName(name, field, limits);
    const valid = name as string;
    const other = byName.get(valid);
    if (other !== undefined)
      throw new ZoottError(
        'INVALID_TASK',
        `${field}: child name ${JSON.stringify(valid)} given for both parent ${JSON.stringify(other)} and parent ${JSON.stringify(parent.name)}; pass a nameFunctor that makes child names unique`,
        { field },
      );
    byName.set(valid, parent.name);
    return valid;
  });
}
