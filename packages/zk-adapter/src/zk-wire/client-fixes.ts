import { ZoottError } from '@zoott/core';
import { type LibClient, type LibModule, lib } from './client-lib.js';
import { ERR } from './protocol.js';

/**
 * A self-check, run before the first connection, that the client library in use carries
 * zoott's fixes (patches/node-zookeeper-client@1.1.3.patch). The adapter's build bundles the
 * patched copy, so a user's install has them; this check is what keeps a copy WITHOUT them
 * (an unbundled build, a stray `node-zookeeper-client` picked up by a bundler) from being used
 * silently. Without the version-0 fix, a multi that checks a stale version 0 succeeds, and
 * the fencing every claim and completion rests on stops holding.
 *
 * Every check runs on a client that is never connected: no I/O, a fraction of a millisecond.
 */

/** The library parts the check reads, beyond the typed slice the adapter uses. */
interface CheckedModule extends LibModule {
  Exception?: { create?: (code: number, path?: string) => { name: string; code: number } };
}

interface CheckedClient extends LibClient {
  connectionManager: LibClient['connectionManager'] & {
    armReadTimer?: unknown;
    onSocketConnected?: () => void;
    onSocketData?: (buffer: Buffer) => void;
    queue?: (request: unknown, callback?: unknown) => void;
  };
}

interface CheckedOp {
  version?: number;
}

/** Which fixes `mod` lacks, by name; empty when it has them all. */
export function missingClientFixes(mod: LibModule): string[] {
  const checked = mod as CheckedModule;
  const missing: string[] = [];
  // 127.0.0.1:1 is never dialled: connect() is never called on this client.
  const client = checked.createClient('127.0.0.1:1', {
    sessionTimeout: 30_000,
    spinDelay: 1000,
    retries: 0,
  }) as CheckedClient;

  // Version 0 in a multi's check/set/remove must stay 0 ("any" is -1): the fencing fix.
  const tx = client.transaction();
  tx.check('/zoott-self-check', 0).setData('/zoott-self-check', Buffer.alloc(0), 0);
  tx.remove('/zoott-self-check', 0);
  const ops = (tx as unknown as { ops?: CheckedOp[] }).ops ?? [];
  if (ops.length !== 3 || ops.some((op) => op.version !== 0))
    missing.push('multi version 0 (Transaction.js)');

  // A server error code the library does not list must not throw inside the socket handler.
  try {
    const exception = checked.Exception?.create?.(ERR.QUOTA_EXCEEDED, '/zoott-self-check');
    if (exception?.name !== 'UNKNOWN' || exception.code !== ERR.QUOTA_EXCEEDED)
      missing.push('unknown error codes (Exception.js)');
  } catch {
    missing.push('unknown error codes (Exception.js)');
  }

  // setData with null data is "no data". The request goes to this never-connected client's
  // own queue, replaced here so nothing is kept.
  client.connectionManager.queue = () => {};
  try {
    client.setData('/zoott-self-check', null, 0, () => {});
  } catch {
    missing.push('setData(null) (index.js)');
  }

  // The read timeout and the session packets first after a reconnect (ConnectionManager.js):
  // both only act on a live socket, so the check looks for the code the patch adds.
  const cm = client.connectionManager;
  if (typeof cm.armReadTimer !== 'function') missing.push('read timeout (ConnectionManager.js)');
  if (!String(cm.onSocketConnected).includes('packetQueue.unshift'))
    missing.push('auth and watches first on reconnect (ConnectionManager.js)');
  // Without it the reply to a multiRead (read-batch.ts) would drop the connection.
  if (!String(cm.onSocketData).includes('replyPayload'))
    missing.push('replies to new operations (ConnectionManager.js)');
  return missing;
}

let verified = false;

/**
 * Throws INVALID_CONFIG when the client library lacks any fix; passes once per process for
 * the library the adapter was built with (`mod` is for the tests, which feed it other copies).
 */
export function assertClientFixes(mod: LibModule = lib): void {
  if (mod === lib && verified) return;
  const missing = missingClientFixes(mod);
  if (missing.length > 0)
    throw new ZoottError(
      'INVALID_CONFIG',
      `this node-zookeeper-client lacks zoott's fixes (${missing.join(', ')}); ` +
        'refusing to use it: without them a multi checking a stale version 0 succeeds and ' +
        'fencing stops holding. Use the published @zoott/zk-adapter, which bundles the patched client',
      { op: 'connect' },
    );
  if (mod === lib) verified = true;
}
