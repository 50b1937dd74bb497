import type { TaskKey } from '../tree/keys.js';
import type { EngineContext } from './context.js';
import { shapes as nodeShapes, readNode } from './corrupt.js';
import { codeOf } from './errors.js';
import { AREA } from './layout.js';
import type { CompletedRecord } from './types.js';

/** What a task's ancestor left behind, from `ctx.ancestorResults()`. */
export interface AncestorResult<R = unknown> {
  key: TaskKey;
  name: string;
  /** `true` when the ancestor has a completed record (its `result` may still be undefined). */
  completed: boolean;
  /** The type recorded with the result; absent when not completed. */
  type?: string;
  result?: R;
}

/**
 * The completed record of `key`, or `null` when it has none (not completed, cancelled, or a
 * record that cannot be read, which is reported to the engine's `onCorrupt`). One read: the
 * record sits in the task's bucket, which is its whole subtree's bucket.
 */
export async function completedRecord(
  ctx: EngineContext,
  key: TaskKey,
): Promise<CompletedRecord | null> {
  const path = ctx.layout.recordPath(AREA.completed, key);
  try {
    const got = await ctx.coordinator.get(path);
    return readNode<CompletedRecord>(got.data, path, nodeShapes.record, ctx.onCorrupt) ?? null;
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return null;
    throw err;
  }
}

/** The reads a handler gets for its ancestors' results, bound to its task's key. */
export interface ResultReaders {
  /**
   * The parent's result: `undefined` for a top-level task, or when the parent has no
   * completed record. A child only starts once its parent completed, so a running child
   * finds it unless an operator cancelled or re-queued the parent meanwhile.
   */
  parentResult<R = unknown>(): Promise<R | undefined>;
  /** Every ancestor's result, parent first, root last (reads in parallel, one per level). */
  ancestorResults<R = unknown>(): Promise<AncestorResult<R>[]>;
}

/** {@link ResultReaders} for the task `key`, reading through `context()`. */
export function resultReaders(context: () => Promise<EngineContext>, key: TaskKey): ResultReaders {
  const ancestorKeys = () => key.slice(0, -1).map((_, i) => key.slice(0, key.length - 1 - i));
  return {
    async parentResult<R>() {
      if (key.length < 2) return undefined;
      const rec = await completedRecord(await context(), key.slice(0, -1));
      return rec?.result as R | undefined;
    },
    async ancestorResults<R>() {
      const ctx = await context();
      return Promise.all(
        ancestorKeys().map(async (ancestor): Promise<AncestorResult<R>> => {
          const rec = await completedRecord(ctx, ancestor);
          const out: AncestorResult<R> = {
            key: ancestor,
            name: ancestor[ancestor.length - 1]!,
            completed: !!rec,
          };
          if (rec) {
            out.type = rec.type;
            if (rec.result !== undefined) out.result = rec.result as R;
          }
          return out;
        }),
      );
    },
  };
}
