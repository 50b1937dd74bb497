import type { Acl, Op } from '@zoott/core';
import { lib } from './client-lib.js';
import { jute } from './jute-speed.js';
import { OP } from './protocol.js';

/** The library's create mode: persistent or ephemeral, plus 2 for sequential. */
export function createMode(
  ephemeral: boolean | undefined,
  sequential: boolean | undefined,
): number {
  return (ephemeral ? lib.CreateMode.EPHEMERAL : lib.CreateMode.PERSISTENT) + (sequential ? 2 : 0);
}

/**
 * A multi's request payload that writes checked ops straight into the request frame: the
 * same bytes as the library's `Transaction` (`TransactionRequest`: a MultiHeader and a request
 * record per op, then the end marker), without what the library builds on the way.
 *
 * Why: every claim and every completion of a busy worker is a multi. Per op the library's
 * transaction re-validates the path, builds an op object, a MultiHeader and a request record,
 * a jute ACL and Id record per ACL entry of a create, and copies a set's data into a fresh
 * zero-filled buffer; the codec then walks each record's attribute list twice (length, then
 * bytes). Here one object holds the ops, measures them in one pass and writes them in one.
 * The ops were checked before (`checkMulti`); the reply is the library's multi reply.
 */
export class MultiPayload {
  private chroot: string | undefined = undefined;

  constructor(
    private readonly ops: readonly Op[],
    private readonly defaultAcl: readonly Acl[],
  ) {}

  /** The library sets the connection's chroot on every payload it queues. */
  setChrootPath(chroot: string | undefined): void {
    this.chroot = chroot;
  }

  private sentPath(path: string): string {
    const chroot = this.chroot;
    if (!chroot) return path;
    return path === '/' ? chroot : chroot + path;
  }

  byteLength(): number {
    // One MultiHeader per op (int, boolean, int) and the end marker's.
    let size = MULTI_HEADER * (this.ops.length + 1);
    // Indexed loops (here and in serialize): an iterator result per op and ACL entry, on
    // every claim and completion multi, showed in the drain's allocation profile.
    const ops = this.ops;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      size += 4 + Buffer.byteLength(this.sentPath(op.path));
      switch (op.op) {
        case 'create': {
          size += dataLength(op.data) + 4 + 4;
          const acl = op.acl ?? this.defaultAcl;
          for (let j = 0; j < acl.length; j++) {
            const entry = acl[j]!;
            size += 4 + 4 + Buffer.byteLength(entry.scheme) + 4 + Buffer.byteLength(entry.id);
          }
          break;
        }
        case 'set':
          size += dataLength(op.data) + 4;
          break;
        default:
          size += 4;
      }
    }
    return size;
  }

  serialize(buf: Buffer, offset: number): number {
    let at = offset;
    const ops = this.ops;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      at = writeHeader(buf, at, OP_TYPE[op.op], false, -1);
      at = writeString(buf, at, this.sentPath(op.path));
      switch (op.op) {
        case 'create': {
          at = writeData(buf, at, op.data);
          const acl = op.acl ?? this.defaultAcl;
          at = buf.writeInt32BE(acl.length, at);
          for (let j = 0; j < acl.length; j++) {
            const entry = acl[j]!;
            at = buf.writeInt32BE(entry.perms, at);
            at = writeString(buf, at, entry.scheme);
            at = writeString(buf, at, entry.id);
          }
          at = buf.writeInt32BE(createMode(op.ephemeral, op.sequential), at);
          break;
        }
        case 'set':
          at = writeData(buf, at, op.data);
          at = buf.writeInt32BE(op.version ?? -1, at);
          break;
        default:
          at = buf.writeInt32BE(op.version ?? -1, at);
      }
    }
    at = writeHeader(buf, at, -1, true, -1);
    return at - offset;
  }
}

const MULTI_HEADER = 9;
const MULTI = OP.MULTI;
/** ZooKeeper's op codes of the four multi ops. */
const OP_TYPE = { create: 1, delete: 2, set: 5, check: 13 } as const;

function dataLength(data: Uint8Array | null | undefined): number {
  return data ? 4 + data.byteLength : 4;
}

function writeHeader(buf: Buffer, at: number, type: number, done: boolean, err: number): number {
  let next = buf.writeInt32BE(type, at);
  next = buf.writeUInt8(done ? 1 : 0, next);
  return buf.writeInt32BE(err, next);
}

function writeString(buf: Buffer, at: number, text: string): number {
  const written = buf.write(text, at + 4, 'utf8');
  buf.writeInt32BE(written, at);
  return at + 4 + written;
}

/** A buffer field: its length and bytes, or -1 for none (as the library sends null data). */
function writeData(buf: Buffer, at: number, data: Uint8Array | null | undefined): number {
  if (!data) return buf.writeInt32BE(-1, at);
  const dataAt = buf.writeInt32BE(data.byteLength, at);
  buf.set(data, dataAt);
  return dataAt + data.byteLength;
}

interface Protocol {
  Request: new (header: unknown, payload: unknown) => unknown;
  protocol: { RequestHeader: new () => { type: number } };
}
const typedJute = jute as unknown as Protocol;

/** The whole multi request (header and payload) for the library's connection queue. */
export function multiRequest(ops: readonly Op[], defaultAcl: readonly Acl[]): unknown {
  const header = new typedJute.protocol.RequestHeader();
  header.type = MULTI;
  return new typedJute.Request(header, new MultiPayload(ops, defaultAcl));
}
