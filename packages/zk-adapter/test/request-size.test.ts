import { type Acl, OPEN_ACL } from '@zoott/core';
import {
  FRAME_ALLOWANCE_BYTES,
  type FrameOp,
  JUTE_MAX_BUFFER,
  requestFrameBytes,
} from '@zoott/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ZK_MAX_DATA_BYTES } from '../src/index.js';
import { bytes, freshNamespace, type JuteRec, libJute, open } from './helpers.js';

type Rec = JuteRec;
const { protocol: P, data: D } = libJute;
const J = libJute;

const libAcl = (acl: readonly Acl[]) =>
  acl.map((a) => new D.ACL!(a.perms, new D.Id!(a.scheme, a.id)));

/** The record the library builds for one op, as its client does. */
function libRecord(o: FrameOp): { type: number; rec: Rec } {
  const data = Buffer.alloc(o.dataBytes ?? 0);
  switch (o.op) {
    case 'create':
      return {
        type: J.OP_CODES.CREATE!,
        rec: new P.CreateRequest!(o.path, data, libAcl(o.acl ?? []), 0),
      };
    case 'set':
      return { type: J.OP_CODES.SET_DATA!, rec: new P.SetDataRequest!(o.path, data, -1) };
    case 'delete':
      return { type: J.OP_CODES.DELETE!, rec: new P.DeleteRequest!(o.path, -1) };
    case 'check':
      return { type: J.OP_CODES.CHECK!, rec: new P.CheckVersionRequest!(o.path, 3) };
    default:
      return { type: J.OP_CODES.GET_DATA!, rec: new P.GetDataRequest!(o.path, false) };
  }
}

/** The multi's ops as the library's Transaction hands them to TransactionRequest. */
function libOp(o: FrameOp): Record<string, unknown> {
  const data = Buffer.alloc(o.dataBytes ?? 0);
  const type = libRecord(o).type;
  return {
    type,
    path: o.path,
    data,
    version: -1,
    mode: 0,
    acls: (o.acl ?? []).map((a) => ({ toRecord: () => libAcl([a])[0] })),
  };
}

const encodedFrame = (ops: FrameOp[], asMulti: boolean) => {
  const payload = asMulti ? new J.TransactionRequest(ops.map(libOp)) : libRecord(ops[0]!).rec;
  const type = asMulti ? J.OP_CODES.MULTI! : libRecord(ops[0]!).type;
  return new J.Request(new P.RequestHeader!(1, type), payload).toBuffer().length - 4;
};

const text = fc.string({ unit: 'binary', maxLength: 30 });
const acl = fc.array(
  fc.record({ scheme: text, id: text, perms: fc.integer({ min: 0, max: 31 }) }),
  { maxLength: 3 },
);
const frameOp: fc.Arbitrary<FrameOp> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), path: text, dataBytes: fc.nat(300), acl }),
  fc.record({ op: fc.constant('set' as const), path: text, dataBytes: fc.nat(300) }),
  fc.record({ op: fc.constantFrom('delete' as const, 'check' as const), path: text }),
);

describe('zk adapter: request frame size', () => {
  it("matches the library's encoding for single requests and transactions", () => {
    fc.assert(
      fc.property(frameOp, (o) => {
        expect(requestFrameBytes([o], false)).toBe(encodedFrame([o], false));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.array(frameOp, { minLength: 1, maxLength: 6 }), (ops) => {
        expect(requestFrameBytes(ops, true)).toBe(encodedFrame(ops, true));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(text, (path) => {
        const read: FrameOp = { op: 'read', path };
        expect(requestFrameBytes([read], false)).toBe(encodedFrame([read], false));
      }),
    );
  });

  it('lets through a frame of exactly jute.maxbuffer and refuses one byte more, before sending', async () => {
    // The adapter's limit with the default data limit is the server's own: a frame of
    // 1048575 bytes is answered, a bigger one would make the server drop the connection.
    expect(ZK_MAX_DATA_BYTES + FRAME_ALLOWANCE_BYTES).toBe(JUTE_MAX_BUFFER);
    const ns = await freshNamespace();
    const chroot = ns.slice(ns.indexOf('/'));
    const zk = await open(ns);
    const data = new Uint8Array(ZK_MAX_DATA_BYTES);
    const base = requestFrameBytes(
      [{ op: 'create', path: `${chroot}/`, dataBytes: data.length, acl: OPEN_ACL }],
      false,
    );
    const fits = `/${'f'.repeat(JUTE_MAX_BUFFER - base)}`;
    expect(
      requestFrameBytes(
        [{ op: 'create', path: chroot + fits, dataBytes: data.length, acl: OPEN_ACL }],
        false,
      ),
    ).toBe(JUTE_MAX_BUFFER);
    expect(await zk.create(fits, data)).toBe(fits);
    expect((await zk.get(fits)).stat.dataLength).toBe(ZK_MAX_DATA_BYTES);
    await expect(zk.create(`${fits}g`, data)).rejects.toMatchObject({
      code: 'BAD_ARGUMENTS',
      message: expect.stringMatching(/request of 1048576 bytes .*limit of 1048575/),
    });
    // The same for a multi: one op that fills the frame, then one byte too many.
    const multiBase = requestFrameBytes(
      [{ op: 'create', path: `${chroot}/`, dataBytes: data.length, acl: OPEN_ACL }],
      true,
    );
    const fitsInMulti = `/${'m'.repeat(JUTE_MAX_BUFFER - multiBase)}`;
    await zk.multi([{ op: 'create', path: fitsInMulti, data }]);
    await expect(zk.multi([{ op: 'create', path: `${fitsInMulti}n`, data }])).rejects.toMatchObject(
      { code: 'BAD_ARGUMENTS', op: 'multi' },
    );
    // Nothing was sent that cost the connection.
    expect(zk.state).toBe('connected');
    expect(await zk.create('/after', bytes('ok'))).toBe('/after');
    await zk.close();
  });

  it('counts the chroot: a path that fits without one may not fit with one', async () => {
    const ns = await freshNamespace();
    const chroot = ns.slice(ns.indexOf('/'));
    const zk = await open(ns);
    const data = new Uint8Array(ZK_MAX_DATA_BYTES);
    const bare = requestFrameBytes([{ op: 'set', path: '/', dataBytes: data.length }], false);
    // Fits exactly without the chroot, so with it, it is over by the chroot's length.
    const path = `/${'s'.repeat(JUTE_MAX_BUFFER - bare)}`;
    await expect(zk.set(path, data)).rejects.toMatchObject({
      code: 'BAD_ARGUMENTS',
      message: expect.stringContaining(`request of ${JUTE_MAX_BUFFER + chroot.length} bytes`),
    });
    expect(zk.state).toBe('connected');
    await zk.close();
  });
});
