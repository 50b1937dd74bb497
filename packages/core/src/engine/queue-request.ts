import { ZoottError } from '../contract/errors.js';
import type { NameFunctor } from '../tree/functors.js';
import type { TaskKey } from '../tree/keys.js';
import type { ParentPattern } from '../tree/patterns.js';
import type { AnyTasks, TaskInfo, TaskType } from '../tree/task-map.js';
import type { QueueOptions } from './types.js';

/** Where `queue` puts a task: at the top level, under an exact parent, or under every match. */
export type QueueParent = ParentPattern | { key: TaskKey } | null | undefined;

/**
 * The one-object form of `queue`: the task (`name`, `type`, `data`), where it goes
 * (`parent`, `childName`) and its options (`priority`, `hints`, `maxAttempts`, `backoff`,
 * `notBefore`), all named.
 */
export type QueueRequest<M = AnyTasks, K extends TaskType<M> = TaskType<M>> = TaskInfo<M, K> &
  QueueOptions & {
    /** Top level when omitted; `{ key }` for one exact parent; a name/type pattern for every match. */
    parent?: QueueParent;
    /** Names the child under each matched parent (the seed's `nameFunctor`); default: `name`. */
    childName?: NameFunctor;
  };

const TASK_FIELDS = ['name', 'type', 'data'] as const;
const PLACE_FIELDS = ['parent', 'childName'] as const;
const OPTION_FIELDS = ['priority', 'hints', 'maxAttempts', 'backoff', 'notBefore'] as const;
const REQUEST_FIELDS: readonly string[] = [...TASK_FIELDS, ...PLACE_FIELDS, ...OPTION_FIELDS];

/** Splits a one-object `queue` request into the positional arguments the engine works on. */
export function splitRequest(request: Record<string, unknown>): {
  taskInfo: Record<string, unknown>;
  parent: QueueParent;
  nameFunctor: NameFunctor | null;
  options: QueueOptions;
} {
  for (const key of Object.keys(request))
    if (!REQUEST_FIELDS.includes(key))
      throw new ZoottError(
        'INVALID_TASK',
        `${key}: unknown queue field (allowed: ${REQUEST_FIELDS.join(', ')}; put your own values in data)`,
        { field: key },
      );
  const pick = (fields: readonly string[]) =>
    Object.fromEntries(
      fields.filter((f) => request[f] !== undefined).map((f) => [f, request[f]] as const),
    );
  const childName = request.childName;
  if (childName !== undefined && typeof childName !== 'function')
    throw new ZoottError(
      'INVALID_TASK',
      'childName: must be a function (parentName, name) => string',
      {
        field: 'childName',
      },
    );
  return {
    taskInfo: pick(TASK_FIELDS),
    parent: request.parent as QueueParent,
    nameFunctor: (childName as NameFunctor | undefined) ?? null,
    options: pick(OPTION_FIELDS) as QueueOptions,
  };
}

/**
 * The positional arguments of a `queue` call in either form: one object alone (the others
 * undefined) is the named form, whose fields may include placement and options.
 */
export function queueArguments(args: readonly unknown[]): {
  taskInfo: unknown;
  parent: QueueParent;
  nameFunctor: NameFunctor | null | undefined;
  options: QueueOptions | undefined;
} {
  const [taskInfo, parent, nameFunctor, options] = args;
  if (
    args.slice(1).every((a) => a === undefined) &&
    typeof taskInfo === 'object' &&
    taskInfo !== null &&
    !Array.isArray(taskInfo)
  )
    return splitRequest(taskInfo as Record<string, unknown>);
  return {
    taskInfo,
    parent: parent as QueueParent,
    nameFunctor: nameFunctor as NameFunctor | null | undefined,
    options: options as QueueOptions | undefined,
  };
}

/**
 * One task of `queueMany`: the named form of `queue`, at the top level or under one exact
 * parent (`{ key }`); patterns, which read the tree, are `queue`'s alone.
 */
export type QueueManyRequest<M = AnyTasks, K extends TaskType<M> = TaskType<M>> = {
  // One member per task type, so an array of several types is checked element by element
  // (`Omit` of the whole union would merge the types' data into one loose shape).
  [T in K]: Omit<QueueRequest<M, T>, 'parent'> & { parent?: { key: TaskKey } | null };
}[K];
