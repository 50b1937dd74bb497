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
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

const ustring = (s: string) => 4 + utf8Length(s);

/** Jute-encoded size of one op's request record (ZooKeeper's CreateRequest, SetDataRequest, ...). */
function recordBytes(o: FrameOp): number {
  switch (o.op) {
    case 'create': {
      let acl = 4;
      for (const a of o.acl ?? []) acl += 4 + ustring(a.scheme) + ustring(a.id);
      return ustring(o.path) + 4 + (o.dataBytes ?? 0) + acl + 4;
    }
    case 'set':
      return ustring(o.path) + 4 + (o.dataBytes ?? 0) + 4;
    case 'delete':
    case 'check':
      return ustring(o.path) + 4;
    case 'read':
      // getData, exists, getChildren: path and the watch flag.
      return ustring(o.path) + 1;
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
  let n = REQUEST_HEADER + MULTI_HEADER;
  for (const o of ops) n += MULTI_HEADER + recordBytes(o);
  return n;
}
