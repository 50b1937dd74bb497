import type { Acl } from './acl.js';
import type { Op } from './coordinator.js';
import type { ErrorCode } from './errors.js';
import { ZoottError } from './errors.js';
import { validatePath } from './paths.js';
import {
  FRAME_ALLOWANCE_BYTES,
  type FrameOp,
  frameBound,
  requestFrameBytes,
} from './request-size.js';

/**
 * The checks every adapter runs on a request before it reaches a server. They live here once
 * so that the memory adapter refuses exactly what the ZooKeeper adapter refuses, with the same
 * codes and messages: a test that passes on one adapter then means the same on the other.
 */

/** What a request is measured against: the data limit and the connection's chroot. */
export interface RequestLimits {
  /** The largest data one write (or one multi, all ops together) may carry. */
  maxDataBytes: number;
  /** The connection's chroot, '' for none: the server sees every path with it in front. */
  chroot: string;
}

/** A value as a message shows it: numbers plainly (NaN stays NaN), anything else as JSON. */
function shown(value: unknown): string {
  return typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** The path as the server sees it, under the chroot. */
function chrooted(path: string, chroot: string): string {
  if (chroot === '') return path;
  return path === '/' ? chroot : chroot + path;
}

/** An expected version: `undefined` is -1 (any version); otherwise an integer >= -1. */
export function checkVersion(version: unknown, op: string, path: string): number {
  if (version === undefined) return -1;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < -1) {
    throw new ZoottError(
      'BAD_ARGUMENTS',
      `version must be an integer >= -1, got ${shown(version)}`,
      {
        op,
        path,
        field: 'version',
      },
    );
  }
  return version;
}

/**
 * A write's data: a Uint8Array within `maxDataBytes`, or nothing (`undefined` or `null`, both
 * stored as empty data, as the ZooKeeper client library treats them). Returns null for nothing.
 * The whole request is measured afterwards by {@link checkFrame}.
 */
export function checkData(
  data: unknown,
  op: string,
  path: string,
  maxDataBytes: number,
): Uint8Array | null {
  if (data === null || data === undefined) return null;
  if (!(data instanceof Uint8Array)) {
    throw new ZoottError('BAD_ARGUMENTS', 'data must be a Uint8Array (or null for no data)', {
      op,
      path,
      field: 'data',
    });
  }
  if (data.byteLength > maxDataBytes) {
    throw new ZoottError(
      'DATA_TOO_LARGE',
      `${data.byteLength} bytes exceed the limit of ${maxDataBytes}`,
      { op, path },
    );
  }
  return data;
}

/**
 * Refuses a request whose frame would not fit the server's buffer (`jute.maxbuffer`, which the
 * default `maxDataBytes` + FRAME_ALLOWANCE_BYTES equals). ZooKeeper does not answer such a
 * frame: it drops the connection, and every other request on that connection pays for it. The
 * size is exact: paths with the chroot, data, ACLs and headers.
 */
export function checkFrame(
  ops: readonly FrameOp[],
  asMulti: boolean,
  limits: RequestLimits,
  op: string,
  path?: string,
): void {
  const limit = limits.maxDataBytes + FRAME_ALLOWANCE_BYTES;
  // Nearly every request is far below the limit: the cheap bound says so without measuring.
  if (frameBound(ops, asMulti, limits.chroot) <= limit) return;
  const sent =
    limits.chroot === '' ? ops : ops.map((o) => ({ ...o, path: chrooted(o.path, limits.chroot) }));
  const size = requestFrameBytes(sent, asMulti);
  if (size <= limit) return;
  const data = ops.reduce((n, o) => n + (o.dataBytes ?? 0), 0);
  // A path long enough to break the frame would drown the message it is part of.
  throw new ZoottError(
    'BAD_ARGUMENTS',
    `request of ${size} bytes (data ${data}, the rest paths, ACLs and headers) exceeds the limit of ${limit} (maxDataBytes ${limits.maxDataBytes} + ${FRAME_ALLOWANCE_BYTES})`,
    { op, ...(path !== undefined && path.length <= 200 ? { path } : {}) },
  );
}

/** A request's path: well-formed, and short enough for a frame under the chroot. */
export function checkRequestPath(path: string, op: string, limits: RequestLimits): void {
  validatePath(path, op);
  // A read's frame is its path and a few bytes: only a path of about a third of the limit
  // needs measuring (no frame object per read otherwise).
  if (3 * (path.length + limits.chroot.length) + READ_FRAME_EXTRA <= limits.maxDataBytes) return;
  checkFrame([{ op: 'read', path }], false, limits, op, path);
}

/** A read's frame besides its path: header, string length, watch flag (within the allowance). */
const READ_FRAME_EXTRA = 13;

/** ZooKeeper's per-op codes of a failed multi: OK before the failure, RUNTIME_INCONSISTENCY after. */
export function multiCodes(
  count: number,
  failed: number,
  code: ErrorCode,
): Array<ErrorCode | null> {
  return Array.from({ length: count }, (_, index) =>
    index < failed ? null : index === failed ? code : 'RUNTIME_INCONSISTENCY',
  );
}

/** The data one multi op carries, 0 for ops without data or not even an object. */
function opDataBytes(op: unknown): number {
  return typeof op === 'object' && op !== null && 'data' in op && op.data instanceof Uint8Array
    ? op.data.byteLength
    : 0;
}

/**
 * One op of a multi, checked as the server would check it but before anything is sent: a
 * failure names the op's index and carries the per-op codes a server refusal would. Returns
 * the op's expected version (-1 for creates).
 */
export function checkMultiOp(input: unknown, index: number, count: number): number {
  // Plain functions, no closures: every op of every multi passes here.
  const op = input as Op | null | undefined;
  if (typeof op !== 'object' || op === null)
    return opFailure(op, index, count, 'BAD_ARGUMENTS', 'not an op object');
  if (typeof op.path !== 'string')
    return opFailure(op, index, count, 'BAD_ARGUMENTS', 'path must be a string', 'path');
  try {
    validatePath(op.path, 'multi');
  } catch (err) {
    return opFailure(op, index, count, 'INVALID_PATH', (err as Error).message, 'path');
  }
  switch (op.op) {
    case 'create':
      checkOpData(op, index, count);
      return -1;
    case 'set':
      checkOpData(op, index, count);
      return checkOpVersion(op, index, count);
    case 'delete':
    case 'check':
      return checkOpVersion(op, index, count);
    default:
      return opFailure(
        op,
        index,
        count,
        'BAD_ARGUMENTS',
        'op must be create, set, delete or check',
        'op',
      );
  }
}

/** Refuses op `index` of a multi of `count`, with the per-op codes a server refusal carries. */
function opFailure(
  op: Op | null | undefined,
  index: number,
  count: number,
  code: ErrorCode,
  why: string,
  field?: string,
): never {
  throw new ZoottError(code, `op ${index} (${String(op?.op)}): ${why}`, {
    op: 'multi',
    path: typeof op?.path === 'string' ? op.path : undefined,
    opIndex: index,
    opCodes: multiCodes(count, index, code),
    field,
  });
}

function checkOpVersion(op: Op, index: number, count: number): number {
  const version = (op as { version?: unknown }).version;
  if (version === undefined) return -1;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < -1)
    opFailure(
      op,
      index,
      count,
      'BAD_ARGUMENTS',
      `version must be an integer >= -1, got ${shown(version)}`,
      'version',
    );
  return version as number;
}

function checkOpData(op: Op, index: number, count: number): void {
  const data = (op as { data?: unknown }).data;
  if (data !== undefined && data !== null && !(data instanceof Uint8Array))
    opFailure(
      op,
      index,
      count,
      'BAD_ARGUMENTS',
      'data must be a Uint8Array (or null for no data)',
      'data',
    );
}

/**
 * Every client-side check of a multi, in the order a reader expects the most useful error: an
 * array at all; the data of all ops together against the data limit (each op may fit while the
 * batch does not); each op; then paths, data and ACLs together against the frame limit. A
 * multi that passes is sent whole or not at all, so a refusal here writes nothing.
 */
export function checkMulti(
  ops: unknown,
  limits: RequestLimits,
  defaultAcl: readonly Acl[],
  /** An adapter's own check of one op, run after the shared ones (the ZooKeeper adapter's ACLs). */
  checkOp?: (op: Op, index: number) => void,
): Op[] {
  if (!Array.isArray(ops)) {
    throw new ZoottError('BAD_ARGUMENTS', 'multi takes an array of ops', { op: 'multi' });
  }
  const total = ops.reduce((sum: number, o: unknown) => sum + opDataBytes(o), 0);
  if (total > limits.maxDataBytes) {
    throw new ZoottError(
      'DATA_TOO_LARGE',
      `the ops carry ${total} bytes together, over the limit of ${limits.maxDataBytes}`,
      { op: 'multi' },
    );
  }
  const checked = ops as Op[];
  for (let i = 0; i < checked.length; i++) {
    checkMultiOp(checked[i], i, checked.length);
    checkOp?.(checked[i]!, i);
  }
  const frame = checked.map((op): FrameOp => {
    const frameOp: FrameOp = { op: op.op, path: op.path, dataBytes: opDataBytes(op) };
    if (op.op === 'create') frameOp.acl = op.acl ?? defaultAcl;
    return frameOp;
  });
  checkFrame(frame, true, limits, 'multi');
  return checked;
}
