/** Size bounds applied to tasks. Every bound protects ZooKeeper or a worker from bad input. */
export interface TaskLimits {
  /**
   * Longest task name, in UTF-16 code units. Names are matched against user regular
   * expressions, so a bound on their length also bounds the cost of a match.
   */
  maxNameLength: number;
  /** Longest task type, in UTF-16 code units (types are matched by patterns too). */
  maxTypeLength: number;
  /** Largest `data`, counted as the UTF-8 bytes of its JSON encoding. */
  maxDataBytes: number;
  /** Deepest task key (number of names from the world root), which bounds pending-name length. */
  maxDepth: number;
}

/**
 * Defaults: 200-character names and types, 512 KiB of JSON data (half of ZooKeeper's
 * ~1 MB node limit, leaving room for the copies the engine stores next to it), depth 32.
 */
export const DEFAULT_TASK_LIMITS: Readonly<TaskLimits> = Object.freeze({
  maxNameLength: 200,
  maxTypeLength: 200,
  maxDataBytes: 512 * 1024,
  maxDepth: 32,
});

/** Merges caller overrides into the defaults, ignoring `undefined` entries. */
export function resolveLimits(limits?: Partial<TaskLimits>): TaskLimits {
  const out: TaskLimits = { ...DEFAULT_TASK_LIMITS };
  if (limits) {
    for (const key of Object.keys(out) as (keyof TaskLimits)[]) {
      const value = limits[key];
      if (value !== undefined) out[key] = value;
    }
  }
  return out;
}
