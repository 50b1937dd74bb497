import type { Acl, Op } from '@zoott/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMode, MultiPayload, multiRequest } from '../src/zk-wire/multi-request.js';
import { libJute } from './helpers.js';
import { chrootOf, fastJuteAround, original, pathOf, text } from './jute-arbitraries.js';

const { protocol: P, data: D } = libJute;
const J = libJute;

fastJuteAround();

const path = pathOf('grapheme');
const chroot = chrootOf(path);
const version = fc.option(fc.integer({ min: -1, max: 2 ** 31 - 1 }), { nil: undefined });
const data = fc.option(fc.uint8Array({ maxLength: 3000 }), { nil: undefined });
const acl: fc.Arbitrary<Acl[]> = fc.array(
  fc.record({ perms: fc.integer({ min: 0, max: 31 }), scheme: text, id: text }),
  { minLength: 1, maxLength: 3 },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc
    .record({
      path,
      data,
      acl: fc.option(acl, { nil: undefined }),
      ephemeral: fc.boolean(),
      sequential: fc.boolean(),
    })
    .map((x): Op => {
      const o: Op = { op: 'create', path: x.path, ephemeral: x.ephemeral };
      if (x.data !== undefined) o.data = x.data;
      if (x.acl !== undefined) o.acl = x.acl;
      if (x.sequential) o.sequential = true;
      return o;
    }),
  fc
    .record({ path, data, version })
    .map((x): Op => ({ op: 'set', path: x.path, data: x.data ?? new Uint8Array(0), ...v(x) })),
  fc.record({ path, version }).map((x): Op => ({ op: 'delete', path: x.path, ...v(x) })),
  fc
    .record({ path, version: fc.integer({ min: -1, max: 2 ** 31 - 1 }) })
    .map((x): Op => ({ op: 'check', path: x.path, version: x.version })),
);

function v(x: { version: number | undefined }): { version?: number } {
  return x.version === undefined ? {} : { version: x.version };
}

/** The ops as the library's own Transaction takes them (lib/Transaction.js). */
function libOps(ops: readonly Op[], defaultAcl: readonly Acl[]): unknown[] {
  const buf = (d: Uint8Array | null | undefined) =>
    d ? Buffer.from(d.buffer, d.byteOffset, d.byteLength) : undefined;
  return ops.map((o) => {
    switch (o.op) {
      case 'create':
        return {
          type: J.OP_CODES.CREATE,
          path: o.path,
          data: buf(o.data),
          acls: (o.acl ?? defaultAcl).map((a) => ({
            toRecord: () => new D.ACL!(a.perms, new D.Id!(a.scheme, a.id)),
          })),
          mode: createMode(o.ephemeral, o.sequential),
        };
      case 'set':
        return { type: J.OP_CODES.SET_DATA, path: o.path, data: buf(o.data), version: vOf(o) };
      case 'delete':
        return { type: J.OP_CODES.DELETE, path: o.path, version: vOf(o) };
      default:
        return { type: J.OP_CODES.CHECK, path: o.path, version: vOf(o) };
    }
  });
}

function vOf(o: { version?: number }): number {
  return o.version ?? -1;
}

describe('zk adapter: the multi request', () => {
  it('encodes every multi byte for byte as the library transaction does', () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 6 }),
        acl,
        chroot,
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (ops, defaultAcl, root, xid) => {
          const header = new P.RequestHeader!(xid, J.OP_CODES.MULTI);
          const fast = new MultiPayload(ops, defaultAcl);
          fast.setChrootPath(root);
          const slow = new J.TransactionRequest(libOps(ops, defaultAcl));
          slow.setChrootPath(root);
          const expected = original(() => new J.Request(header, slow).toBuffer());
          expect(new J.Request(header, fast).toBuffer()).toEqual(expected);
          expect(fast.byteLength()).toBe(expected.length - 4 - 8);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('is queued as a multi (op code 14), so its reply is decoded as one', () => {
    const request = multiRequest([{ op: 'delete', path: '/a' }], []) as {
      header: { type: number };
    };
    expect(request.header.type).toBe(J.OP_CODES.MULTI);
  });
});
