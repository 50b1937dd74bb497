import type { Acl } from './acl.js';

/** ZooKeeper's default `jute.maxbuffer`: the largest request frame a server reads, in bytes. */
export const JUTE_MAX_BUFFER = 1_048_575;

/** The default data limit of both adapters: `jute.maxbuffer` less 1 KiB for the rest of a frame. */
export const DEFAULT_MAX_DATA_BYTES = 1_047_552;

/**
 * Room for everything but data in one request frame: paths, ACLs, versions, headers. A request
 * whose frame exceeds `maxDataBytes + FRAME_ALLOWANCE_BYTES` is refused before it is sent
 * (BAD_ARGUMENTS). With the default data limit that is exactly `jute.maxbuffer`: the server
 * does not answer a bigger frame, it closes the connection, which every other request on it
 * then pays for.
 */
export const FRAME_ALLOWANCE_BYTES = JUTE_MAX_BUFFER - DEFAULT_MAX_DATA_BYTES;

/** What the size of one write or read depends on. */
export interface FrameOp {
  op: 'create' | 'set' | 'delete' | 'check' | 'read';
  /** The path as the server sees it (with the connection's chroot, if any). */
  path: string;
  dataBytes?: number;
  /** A create's ACL. */
  acl?: readonly Acl[];
}

/** UTF-8 length of a string without encoding it (lone surrogates count 3, as they are sent). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const nextCode = text.charCodeAt(i + 1);
      if (nextCode >= 0xdc00 && nextCode <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** A string's byte count on the wire: exact, or an upper bound (see {@link frameBound}). */
type Measure = (text: string) => number;

/** At most 3 UTF-8 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units). */
const atMost: Measure = (s) => 3 * s.length;

/** Jute-encoded size of one op's request record (ZooKeeper's CreateRequest, SetDataRequest, ...). */
function recordBytes(frameOp: FrameOp, len: Measure = utf8Length): number {
  // Every string goes as its 4-byte length and its bytes.
  const path = 4 + len(frameOp.path);
  switch (frameOp.op) {
    case 'create': {
      let acl = 4;
      // Indexed (as below): every claim and completion multi is measured, and an iterator
      // result per op and ACL entry showed in the drain's allocation profile.
      const list = frameOp.acl ?? [];
      for (let i = 0; i < list.length; i++) {
        const entry = list[i]!;
        acl += 4 + 4 + len(entry.scheme) + 4 + len(entry.id);
      }
      return path + 4 + (frameOp.dataBytes ?? 0) + acl + 4;
    }
    case 'set':
      return path + 4 + (frameOp.dataBytes ?? 0) + 4;
    case 'delete':
    case 'check':
      return path + 4;
    case 'read':
      // getData, exists, getChildren: path and the watch flag.
      return path + 1;
  }
}

const REQUEST_HEADER = 8; // xid, type
const MULTI_HEADER = 9; // type, done, err

/**
 * The size of a request frame as ZooKeeper reads it against `jute.maxbuffer`: request header
 * plus record, without the 4-byte length prefix. One op is a plain request; several (or a
 * `multi` of one) are a transaction: a header per op and an end marker.
 */
export function requestFrameBytes(ops: readonly FrameOp[], asMulti: boolean): number {
  if (!asMulti) return REQUEST_HEADER + recordBytes(ops[0]!);
  let bytes = REQUEST_HEADER + MULTI_HEADER;
  for (const frameOp of ops) bytes += MULTI_HEADER + recordBytes(frameOp);
  return bytes;
}

/**
 * An upper bound of {@link requestFrameBytes} for `ops` sent under `chroot` (paths as given,
 * without it), counting 3 bytes per character: no UTF-8 pass and no chrooted copy of each
 * path. A request within its limit by this bound is within it exactly, which is nearly every
 * request (the data is checked against the data limit first), so only the rare one near the
 * limit is measured exactly.
 */
export function frameBound(ops: readonly FrameOp[], asMulti: boolean, chroot: string): number {
  const perOp = 3 * chroot.length;
  if (!asMulti) return REQUEST_HEADER + recordBytes(ops[0]!, atMost) + perOp;
  let bytes = REQUEST_HEADER + MULTI_HEADER;
  for (let i = 0; i < ops.length; i++) bytes += MULTI_HEADER + recordBytes(ops[i]!, atMost) + perOp;
  return bytes;
}
