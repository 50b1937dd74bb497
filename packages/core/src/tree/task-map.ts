// The compile-time vocabulary of a world: which task types exist, what data each is queued
// with and what its handler returns. Nothing here exists at run time; the engine still
// validates every task it reads or writes (names, JSON, sizes), because another process may
// have queued it without these types.

/**
 * One task type of a task map: `data` is what a producer queues, `result` what its handler
 * returns. Either may be left out; a missing one is `unknown`.
 */
export interface TaskTypeSpec {
  data?: unknown;
  result?: unknown;
}

/**
 * The constraint on a task map `M`: every property is a {@link TaskTypeSpec}. Written as a
 * mapped type over `M` so that an `interface` (which has no index signature) qualifies and a
 * misspelt `reslt` is still an error.
 */
export type TaskMap<M> = { [K in keyof M]: TaskTypeSpec };

/** The map used when none is given: any type name, `unknown` data and results. */
export type AnyTasks = Record<string, TaskTypeSpec>;

/** The task type names of a map. */
export type TaskType<M> = Extract<keyof M, string>;

/** The data a task of type `K` is queued with (`unknown` when the map does not say). */
export type TaskData<M, K extends TaskType<M>> = M[K] extends { data?: infer D } ? D : unknown;

/** What a handler of type `K` returns (`unknown` when the map does not say). */
export type TaskResult<M, K extends TaskType<M>> = M[K] extends { result?: infer R } ? R : unknown;

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
