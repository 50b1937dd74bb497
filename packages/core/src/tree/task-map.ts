// The compile-time vocabulary of a world: which task types exist, what data each is queued
// with and what its handler returns. Nothing here exists at run time; the engine still
// validates every task it reads or writes (names, JSON, sizes), because another process may
// have queued it without these types.

/**
 * One task type of a task map: `data` is what a producer queues, `result` what its handler
 * returns, `parent` the task type (or types) it is queued under, which types
 * `ctx.parentResult()`. Each may be left out; a missing `data` or `result` is `unknown`.
 */
export interface TaskTypeSpec {
  data?: unknown;
  result?: unknown;
  /** The type names of the tasks this type runs under (one of the map's keys, or a union). */
  parent?: string;
}

/** The fields a task type of a map may declare. */
type SpecField = keyof TaskTypeSpec;

/**
 * What a field a task type may not have must be: a sentence that names it, so the compiler's
 * "not assignable" error says which field is wrong and what the right ones are.
 */
type NotASpecField<F> =
  `${F & string}: not a field of a task type (its fields are data, result and parent)`;

/**
 * The constraint on a task map `M`: every property is a {@link TaskTypeSpec} with no other
 * field, whose `parent` names types of the same map. Written as a mapped type over `M` so
 * that an `interface` (which has no index signature) qualifies, and so that a misspelt
 * `reslt` is an error whether it stands alone or next to `data`. An index signature (a
 * `Record<string, ...>` map, or `TaskMap<any>`, which `Parameters<typeof runWorker>` makes of
 * the constraint) is held to {@link TaskTypeSpec} alone, so {@link AnyTasks} meets it.
 */
export type TaskMap<M> = {
  [K in keyof M]: string extends K
    ? TaskTypeSpec
    : {
        data?: unknown;
        result?: unknown;
        parent?: Extract<keyof M, string>;
      } & { [F in Exclude<keyof M[K], SpecField>]: NotASpecField<F> };
};

/** The map used when none is given: any type name, `unknown` data and results. */
export type AnyTasks = Record<string, TaskTypeSpec>;

/** The task type names of a map. */
export type TaskType<M> = Extract<keyof M, string>;

/** The data a task of type `K` is queued with (`unknown` when the map does not say). */
export type TaskData<M, K extends TaskType<M>> = M[K] extends { data?: infer D } ? D : unknown;

/**
 * What a handler of type `K` returns (`unknown` when the map does not say). For a union of
 * types, the union of their results.
 */
export type TaskResult<M, K extends TaskType<M>> = K extends unknown
  ? M[K] extends { result?: infer R }
    ? R
    : unknown
  : never;

/**
 * The type names a task of type `K` is declared to run under (its map entry's `parent`), or
 * `never` when it declares none.
 */
export type ParentType<M, K extends TaskType<M>> = M[K] extends { parent?: infer P }
  ? Extract<P, TaskType<M>>
  : never;

/** `data` is required exactly when the map's data type does not admit `undefined`. */
type DataField<D> = undefined extends D ? { data?: D } : { data: D };

/** Expands an intersection into one object type, so editors show its fields. */
type Flat<T> = { [P in keyof T]: T[P] } & {};

/**
 * A task as a producer describes it: `name` and `type` identify it in the tree, `data` is
 * its JSON payload. With a task map, `type` is one of the map's names and `data` has that
 * type's data type; any other field is a compile error (and a run-time INVALID_TASK).
 */
export type TaskInfo<M = AnyTasks, K extends TaskType<M> = TaskType<M>> = {
  [T in K]: Flat<
    {
      /** Node name in the tree: no whitespace, `/`, `\`, `|`, nor anything ZooKeeper rejects. */
      name: string;
      /** User-defined kind; workers pick handlers by it. */
      type: T;
    } & DataField<TaskData<M, T>>
  >;
}[K];
