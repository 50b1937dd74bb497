import type { Op } from '../contract/coordinator.js';
import { requestFrameBytes } from '../contract/request-size.js';

/** Bytes counted per op for a chroot the engine cannot see. */
const CHROOT_ALLOWANCE = 256;

/**
 * The request bytes of a multi of `ops` as the client frames it, plus a chroot allowance per
 * op: what the engine's batched multis (group commit, queueMany) weigh against their budgets.
 */
export function multiFrameBytes(ops: readonly Op[]): number {
  const frame = ops.map((op) => ({
    op: op.op,
    path: op.path,
    ...('data' in op && op.data ? { dataBytes: op.data.byteLength } : {}),
  }));
  return requestFrameBytes(frame, true) + CHROOT_ALLOWANCE * ops.length;
}
