import { type Acl, type Op, type OpResult, ZoottError } from '@zoott/core';
import { codeFromZk } from '@zoott/core/internal';
import { statOf, toZoottError } from '../convert.js';
import { type LibClient, type LibStat, OP_CODE } from './client-lib.js';
import { multiRequest } from './multi-request.js';
import { ERR } from './protocol.js';

export { createMode } from './multi-request.js';

/** A multi's reply as the library hands it over: one record per op. */
export type MultiReply = Array<{ type: number; path?: string; stat?: LibStat; err?: number }>;

/** The library's connection queue, which every request goes through (in issue order). */
interface Queue {
  queue(request: unknown, callback: (err: unknown, reply?: { payload: unknown }) => void): void;
}

/**
 * Sends checked ops as one transaction (see {@link multiRequest}). A failed multi comes back
 * as per-op error results, which carry every op's code: they are handed over as the reply.
 */
export function commitMulti(
  client: LibClient,
  ops: readonly Op[],
  defaultAcl: readonly Acl[],
  done: (err: unknown, reply?: MultiReply) => void,
): void {
  const manager = client.connectionManager as unknown as Queue;
  manager.queue(multiRequest(ops, defaultAcl), (err, reply) => {
    if (err) done(err);
    else done(null, (reply!.payload as { results: MultiReply }).results);
  });
}

/**
 * A multi's reply as results, or the failure as ZooKeeper reports it: the failing op's index
 * and code, ops before it 0 (null here), later ones RUNTIME_INCONSISTENCY (never evaluated).
 * `explain` adds what the coordinator knows about an error (a missing chroot).
 */
export function decodeMultiReply(
  raw: MultiReply,
  ops: readonly Op[],
  explain: (err: ZoottError) => ZoottError,
): OpResult[] {
  const failed = raw.findIndex(
    (r) => r.type === OP_CODE.ERROR && r.err !== ERR.OK && r.err !== ERR.RUNTIME_INCONSISTENCY,
  );
  if (failed !== -1 || raw.some((r) => r.type === OP_CODE.ERROR)) {
    const index = failed === -1 ? 0 : failed;
    const plain = toZoottError(
      { code: raw[index]?.err ?? ERR.RUNTIME_INCONSISTENCY, name: 'multi' },
      { op: 'multi', path: ops[index]?.path },
    );
    const failure = explain(plain);
    const opCodes = raw.map((result, opIndex) =>
      opIndex === index ? failure.code : !result.err ? null : codeFromZk(result.err),
    );
    const why = failure === plain ? '' : `: ${failure.message}`;
    throw new ZoottError(failure.code, `op ${index} (${ops[index]?.op}) failed${why}`, {
      op: 'multi',
      path: ops[index]?.path,
      opIndex: index,
      opCodes,
      cause: failure,
    });
  }
  return raw.map((result): OpResult => {
    switch (result.type) {
      case OP_CODE.CREATE:
        return { op: 'create', path: result.path ?? '' };
      case OP_CODE.SET_DATA:
        return { op: 'set', stat: statOf(result.stat!) };
      case OP_CODE.DELETE:
        return { op: 'delete' };
      default:
        return { op: 'check' };
    }
  });
}
