import { type Acl, type Op, type OpResult, ZoottError } from '@zoott/core';
import { codeFromZk } from '@zoott/core/internal';
import { type LibClient, type LibStat, lib, OP_CODE } from './client-lib.js';
import { aclToLib, bufferOf, statOf, toZoottError } from './convert.js';

/** A multi's reply as the library hands it over: one record per op. */
export type MultiReply = Array<{ type: number; path?: string; stat?: LibStat; err?: number }>;

/** The library's create mode: persistent or ephemeral, plus 2 for sequential. */
export function createMode(
  ephemeral: boolean | undefined,
  sequential: boolean | undefined,
): number {
  return (ephemeral ? lib.CreateMode.EPHEMERAL : lib.CreateMode.PERSISTENT) + (sequential ? 2 : 0);
}

/**
 * Sends checked ops as one transaction. A failed multi comes back as per-op error results;
 * the library turns the first non-zero one into `err`, so the results are kept whenever they
 * hold an error record: they carry every op's code.
 */
export function commitMulti(
  client: LibClient,
  ops: readonly Op[],
  defaultAcl: readonly Acl[],
  done: (err: unknown, reply?: MultiReply) => void,
): void {
  const tx = client.transaction();
  for (const o of ops) {
    switch (o.op) {
      case 'create':
        tx.create(
          o.path,
          bufferOf(o.data),
          aclToLib(o.acl ?? defaultAcl),
          createMode(o.ephemeral, o.sequential),
        );
        break;
      case 'set':
        tx.setData(o.path, bufferOf(o.data), o.version ?? -1);
        break;
      case 'delete':
        tx.remove(o.path, o.version ?? -1);
        break;
      case 'check':
        tx.check(o.path, o.version ?? -1);
        break;
    }
  }
  tx.commit((err, results) => {
    if (err && Array.isArray(results) && results.some((r) => r.type === OP_CODE.ERROR)) {
      done(null, results);
    } else done(err, results);
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
  const failed = raw.findIndex((r) => r.type === OP_CODE.ERROR && r.err !== 0 && r.err !== -2);
  if (failed !== -1 || raw.some((r) => r.type === OP_CODE.ERROR)) {
    const index = failed === -1 ? 0 : failed;
    const plain = toZoottError(
      { code: raw[index]?.err ?? -2, name: 'multi' },
      { op: 'multi', path: ops[index]?.path },
    );
    const failure = explain(plain);
    const opCodes = raw.map((r, i) =>
      i === index ? failure.code : !r.err ? null : codeFromZk(r.err),
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
  return raw.map((r): OpResult => {
    switch (r.type) {
      case OP_CODE.CREATE:
        return { op: 'create', path: r.path ?? '' };
      case OP_CODE.SET_DATA:
        return { op: 'set', stat: statOf(r.stat!) };
      case OP_CODE.DELETE:
        return { op: 'delete' };
      default:
        return { op: 'check' };
    }
  });
}
