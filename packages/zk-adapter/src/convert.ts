import { type Acl, type Stat, ZoottError, type ZoottErrorDetails } from '@zoott/core';
import { codeFromZk } from '@zoott/core/internal';
import { type LibAcl, type LibException, type LibStat, lib } from './zk-wire/client-lib.js';
import { ERR } from './zk-wire/protocol.js';

/**
 * A jute `long` (8 bytes, big endian, signed) as a number; exact below 2^53. The high word
 * times 2^32 is exact and the one addition rounds once, so this is the very number
 * `Number(buf.readBigInt64BE(0))` gives, without a BigInt per field (five per Stat).
 */
export function longOf(buf: Buffer | number): number {
  // The adapter's Stat decoder makes these numbers already (see jute-speed.ts).
  if (typeof buf === 'number') return buf;
  return buf.readInt32BE(0) * 0x1_0000_0000 + buf.readUInt32BE(4);
}

/** Session ids are written as 16 hex digits, as ZooKeeper's own tools print them. */
export function sessionHex(buf: Buffer): string {
  return buf.toString('hex').padStart(16, '0');
}

export function statOf(raw: LibStat): Stat {
  // Most nodes are not ephemeral: no hex string made and compared for those.
  const ownerBytes = raw.ephemeralOwner;
  const owner =
    ownerBytes.readUInt32BE(0) === 0 && ownerBytes.readUInt32BE(4) === 0
      ? null
      : sessionHex(ownerBytes);
  return {
    czxid: longOf(raw.czxid),
    mzxid: longOf(raw.mzxid),
    pzxid: longOf(raw.pzxid),
    ctime: longOf(raw.ctime),
    mtime: longOf(raw.mtime),
    version: raw.version,
    cversion: raw.cversion,
    aversion: raw.aversion,
    ephemeralOwner: owner,
    dataLength: raw.dataLength,
    numChildren: raw.numChildren,
  };
}

export function aclToLib(acl: readonly Acl[]): LibAcl[] {
  return acl.map((aclEntry) => {
    if (aclEntry.perms === 0) {
      // The library's ACL constructor refuses a mask of 0, which ZooKeeper itself accepts.
      const entry = Object.create(lib.ACL.prototype) as LibAcl;
      entry.permission = 0;
      entry.id = new lib.Id(aclEntry.scheme, aclEntry.id);
      return entry;
    }
    return new lib.ACL(aclEntry.perms, new lib.Id(aclEntry.scheme, aclEntry.id));
  });
}

export function aclFromLib(acl: readonly LibAcl[] | undefined): Acl[] {
  return (acl ?? []).map((a) => ({ scheme: a.id.scheme, id: a.id.id, perms: a.permission }));
}

/** Node data as the library wants it: a Buffer, or null for "no data". */
export function bufferOf(data: Uint8Array | null | undefined): Buffer | null {
  if (data === null || data === undefined) return null;
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

export function dataOf(data: Buffer | undefined): Uint8Array {
  return data ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(0);
}

function isLibException(err: unknown): err is LibException {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as LibException).code === 'number' &&
    typeof (err as LibException).name === 'string'
  );
}

/**
 * Builds an error without capturing a stack. A server's answer reaches the adapter in the
 * socket's data handler, so the stack it would capture names only the library's parsing
 * code, never the caller (the cause keeps the library's own error). Capturing it is not
 * free, and expected answers are common: a worker reads entries that other workers have just
 * claimed (NO_NODE), and loses claim races (BAD_VERSION, NODE_EXISTS).
 */
function stackless<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Any failure from the library as a ZoottError: server codes through the shared registry
 * (unknown ones become UNKNOWN_SERVER_ERROR), the library's argument assertions as
 * BAD_ARGUMENTS. The original error is kept as `cause`, never exposed as a type.
 */
const SESSION_CLOSED_REQUIRE_SASL = ERR.SESSION_CLOSED_REQUIRE_SASL;

export function toZoottError(err: unknown, details: ZoottErrorDetails): ZoottError {
  if (err instanceof ZoottError) return err;
  if (isLibException(err)) {
    // SESSIONCLOSEDREQUIRESASLAUTH (3.6+): the server takes no request of a session that has
    // not logged in with SASL, and has closed this one.
    if (err.code === SESSION_CLOSED_REQUIRE_SASL)
      return stackless(
        () =>
          new ZoottError(
            'AUTH_FAILED',
            'the server takes requests only from sessions that logged in with SASL (enforce.auth.enabled) and closed this one; give a SASL login (the sasl option)',
            { ...details, cause: err, field: 'sasl' },
          ),
      );
    const code = codeFromZk(err.code);
    const text =
      code === 'UNKNOWN_SERVER_ERROR' ? `server answered with error code ${err.code}` : undefined;
    return stackless(() => new ZoottError(code, text, { ...details, cause: err }));
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ZoottError('BAD_ARGUMENTS', message, { ...details, cause: err });
}
