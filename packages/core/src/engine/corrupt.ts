import { decodeJson } from '../contract/paths.js';

/**
 * A node zoott had to read but could not make sense of: data that is not JSON, or JSON of
 * the wrong shape (another client wrote it, or a hand edit went wrong). Readers report it
 * and carry on with the rest, so one bad node never hides a whole world from an operator.
 */
export interface CorruptNode {
  path: string;
  /** What is wrong with it, in words. */
  reason: string;
}

/** Where readers report corrupt nodes. */
export type CorruptSink = (node: CorruptNode) => void;

/** What a zoott node must look like: `null` when it fits, else what is wrong. */
export type NodeShape = (value: unknown) => string | null;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown) =>
  value === null ? 'empty' : Array.isArray(value) ? 'a JSON array' : `a JSON ${typeof value}`;

/** The shapes of the nodes the inspection verbs read. */
export const shapes = {
  /** Tree node: `{name, type, data}`; empty data is tolerated (a bare parent node). */
  tree: (value: unknown) =>
    value === null || isObject(value) ? null : `is ${describe(value)}, not a tree node object`,
  /** Pending/failed entry: an object with the attempt counter. */
  entry: (value: unknown) =>
    !isObject(value)
      ? `is ${describe(value)}, not an entry object`
      : typeof value.attempts !== 'number'
        ? 'has no numeric "attempts": not a zoott entry'
        : null,
  /** Working node: the claim's identity. */
  claim: (value: unknown) =>
    !isObject(value)
      ? `is ${describe(value)}, not a claim object`
      : typeof value.worker !== 'string'
        ? 'has no string "worker": not a zoott claim'
        : null,
  /** Completed or failed record. */
  record: (v: unknown) => (isObject(v) ? null : `is ${describe(v)}, not a record object`),
  /** Registry node of a worker. */
  worker: (value: unknown) =>
    !isObject(value)
      ? `is ${describe(value)}, not a worker object`
      : typeof value.id !== 'string' || typeof value.started !== 'number'
        ? 'has no string "id" and numeric "started": not a zoott worker'
        : null,
} satisfies Record<string, NodeShape>;

/**
 * Decodes node data and checks its shape. A corrupt node is reported to `sink` and comes
 * back as `undefined`; the caller skips it.
 */
export function readNode<T>(
  data: Uint8Array,
  path: string,
  shape: NodeShape,
  sink: CorruptSink,
): T | undefined {
  let value: unknown;
  try {
    value = decodeJson<unknown>(data, path);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    sink({
      path,
      reason: `data is not JSON: ${cause instanceof Error ? cause.message : (err as Error).message}`,
    });
    return undefined;
  }
  const wrong = shape(value);
  if (wrong !== null) {
    sink({ path, reason: `data ${wrong}` });
    return undefined;
  }
  return value as T;
}
