import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { statOf } from '../src/convert.js';
import type { LibStat } from '../src/zk-wire/client-lib.js';
import { type JuteRec, libJute } from './helpers.js';
import { chrootOf, fastJuteAround, original, pathOf, text } from './jute-arbitraries.js';

// The library's own request classes; the records are built exactly as its client builds them.
type Rec = JuteRec;
const { protocol: P, data: D } = libJute;
const J = libJute;

fastJuteAround();

/**
 * A decoded record with its Stat (if any) as the adapter reads it (`statOf`): the adapter's
 * decoder makes a Stat's zxids and times numbers where the library makes Buffers, and the
 * two must read the same.
 */
function asRead<T>(rec: T): T {
  if (typeof rec !== 'object' || rec === null || !('stat' in rec) || !rec.stat) return rec;
  return { ...rec, stat: statOf(rec.stat as LibStat) };
}

const path = pathOf('grapheme-ascii');
const chroot = chrootOf(path);
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const long = fc.uint8Array({ minLength: 8, maxLength: 8 }).map((b) => Buffer.from(b));
const data = fc.option(
  fc.uint8Array({ maxLength: 5000 }).map((b) => Buffer.from(b)),
  { nil: undefined },
);
const acl = fc
  .record({ perms: fc.integer({ min: 0, max: 31 }), scheme: text, id: text })
  .map(({ perms, scheme, id }) => new D.ACL!(perms, new D.Id!(scheme, id)));
const acls = fc.array(acl, { maxLength: 3 });

/** A request payload as the client builds one, with the op code that goes in its header. */
const payload: fc.Arbitrary<{ type: number; rec: Rec }> = fc.oneof(
  fc.record({ p: path, d: data, a: acls, f: fc.integer({ min: 0, max: 3 }) }).map((x) => ({
    type: J.OP_CODES.CREATE!,
    rec: Object.assign(new P.CreateRequest!(), { path: x.p, data: x.d, acl: x.a, flags: x.f }),
  })),
  fc.record({ p: path, d: data, v: int32 }).map((x) => ({
    type: J.OP_CODES.SET_DATA!,
    rec: Object.assign(new P.SetDataRequest!(), { path: x.p, data: x.d, version: x.v }),
  })),
  fc.record({ p: path, w: fc.boolean() }).map((x) => ({
    type: J.OP_CODES.GET_DATA!,
    rec: Object.assign(new P.GetDataRequest!(), { path: x.p, watch: x.w }),
  })),
  fc.record({ p: path, w: fc.boolean() }).map((x) => ({
    type: J.OP_CODES.GET_CHILDREN2!,
    rec: Object.assign(new P.GetChildren2Request!(), { path: x.p, watch: x.w }),
  })),
  fc.record({ p: path, v: int32 }).map((x) => ({
    type: J.OP_CODES.DELETE!,
    rec: Object.assign(new P.DeleteRequest!(), { path: x.p, version: x.v }),
  })),
  fc.record({ p: path, a: acls, v: int32 }).map((x) => ({
    type: J.OP_CODES.SET_ACL!,
    rec: Object.assign(new P.SetACLRequest!(), { path: x.p, acl: x.a, version: x.v }),
  })),
  fc
    .record({
      z: long,
      w: fc.array(fc.array(path, { maxLength: 3 }), { minLength: 3, maxLength: 3 }),
    })
    .map((x) => ({
      type: J.OP_CODES.SET_WATCHES!,
      rec: Object.assign(new P.SetWatches!(), {
        relativeZxid: x.z,
        dataWatches: x.w[0],
        existWatches: x.w[1],
        childWatches: x.w[2],
      }),
    })),
  fc.record({ s: text, a: data }).map((x) => ({
    type: J.OP_CODES.AUTH!,
    rec: Object.assign(new P.AuthPacket!(), { type: 0, scheme: x.s, auth: x.a }),
  })),
  fc
    .array(
      fc.oneof(
        fc.record({ p: path, d: data, a: acls }).map((x) => ({
          type: J.OP_CODES.CREATE!,
          path: x.p,
          data: x.d,
          acls: x.a.map((r) => ({ toRecord: () => r })),
          mode: 1,
        })),
        fc.record({ p: path, d: data, v: int32 }).map((x) => ({
          type: J.OP_CODES.SET_DATA!,
          path: x.p,
          data: x.d,
          version: x.v,
        })),
        fc
          .record({ p: path, v: int32 })
          .map((x) => ({ type: J.OP_CODES.DELETE!, path: x.p, version: x.v })),
        fc
          .record({ p: path, v: int32 })
          .map((x) => ({ type: J.OP_CODES.CHECK!, path: x.p, version: x.v })),
      ),
      { minLength: 1, maxLength: 6 },
    )
    .map((ops) => ({ type: J.OP_CODES.MULTI!, rec: new J.TransactionRequest(ops) })),
);

describe('zk adapter: fast jute codec', () => {
  it('encodes every request byte for byte as the library does', () => {
    fc.assert(
      fc.property(payload, chroot, int32, ({ type, rec }, root, xid) => {
        rec.setChrootPath(root);
        const header = new P.RequestHeader!(xid, type);
        const request = new J.Request(header, rec);
        const fast = request.toBuffer();
        expect(fast).toEqual(original(() => request.toBuffer()));
        expect(rec.byteLength()).toBe(original(() => rec.byteLength()));
      }),
      { numRuns: 400 },
    );
  });

  it('encodes header-only and payload-only requests (ping, close, connect)', () => {
    const ping = new J.Request(new P.RequestHeader!(-2, 11), null);
    expect(ping.toBuffer()).toEqual(original(() => ping.toBuffer()));
    const connect = new J.Request(
      null,
      new P.ConnectRequest!(0, Buffer.alloc(8, 7), 30_000, Buffer.alloc(8, 1), Buffer.alloc(16, 2)),
    );
    expect(connect.toBuffer()).toEqual(original(() => connect.toBuffer()));
  });

  /** Replies as the server sends them (encoded by the library), decoded both ways. */
  const stat = fc
    .record({
      longs: fc.array(long, { minLength: 6, maxLength: 6 }),
      ints: fc.array(int32, { minLength: 5, maxLength: 5 }),
    })
    .map(({ longs, ints }) =>
      Object.assign(new D.Stat!(), {
        czxid: longs[0],
        mzxid: longs[1],
        ctime: longs[2],
        mtime: longs[3],
        version: ints[0],
        cversion: ints[1],
        aversion: ints[2],
        ephemeralOwner: longs[4],
        dataLength: ints[3],
        numChildren: ints[4],
        pzxid: longs[5],
      }),
    );
  const reply: fc.Arbitrary<{ cls: string; rec: Rec }> = fc.oneof(
    fc.record({ d: data, s: stat }).map((x) => ({
      cls: 'GetDataResponse',
      rec: Object.assign(new P.GetDataResponse!(), { data: x.d, stat: x.s }),
    })),
    fc.record({ c: fc.array(text, { maxLength: 50 }), s: stat }).map((x) => ({
      cls: 'GetChildren2Response',
      rec: Object.assign(new P.GetChildren2Response!(), { children: x.c, stat: x.s }),
    })),
    path.map((p) => ({
      cls: 'CreateResponse',
      rec: Object.assign(new P.CreateResponse!(), { path: p }),
    })),
    fc.record({ a: acls, s: stat }).map((x) => ({
      cls: 'GetACLResponse',
      rec: Object.assign(new P.GetACLResponse!(), { acl: x.a, stat: x.s }),
    })),
    fc.record({ t: int32, st: int32, p: path }).map((x) => ({
      cls: 'WatcherEvent',
      rec: Object.assign(new P.WatcherEvent!(), { type: x.t, state: x.st, path: x.p }),
    })),
    fc.record({ x: int32, z: long, e: int32 }).map((x) => ({
      cls: 'ReplyHeader',
      rec: Object.assign(new P.ReplyHeader!(), { xid: x.x, zxid: x.z, err: x.e }),
    })),
  );

  it('decodes every reply to the same fields as the library does', () => {
    fc.assert(
      fc.property(reply, chroot, fc.nat(16), ({ cls, rec }, root, pad) => {
        // The server sends chrooted paths: encode with the chroot, decode relative to it.
        rec.setChrootPath(root);
        const size = original(() => rec.byteLength());
        const wire = Buffer.alloc(pad + size + 3, 0xee);
        original(() => rec.serialize(wire, pad));
        const decode = () => {
          const out = new P[cls]!();
          out.setChrootPath(root);
          const n = out.deserialize(wire, pad);
          return { n, out };
        };
        const fast = decode();
        const slow = original(decode);
        expect(fast.n).toBe(size);
        expect(asRead(fast.out)).toEqual(asRead(slow.out));
      }),
      { numRuns: 400 },
    );
  });

  it('decodes a multi reply to the same results as the library does', () => {
    const parts: Rec[] = [
      new P.MultiHeader!(J.OP_CODES.CREATE, false, 0),
      Object.assign(new P.CreateResponse!(), { path: '/root/a' }),
      new P.MultiHeader!(J.OP_CODES.SET_DATA, false, 0),
      Object.assign(new P.SetDataResponse!(), { stat: new D.Stat!() }),
      new P.MultiHeader!(J.OP_CODES.DELETE, false, 0),
      new P.MultiHeader!(J.OP_CODES.ERROR, false, 0),
      Object.assign(new P.ErrorResponse!(), { err: -101 }),
      new P.MultiHeader!(-1, true, -1),
    ];
    const size = original(() => parts.reduce((n, p) => n + p.byteLength(), 0));
    const wire = Buffer.alloc(size);
    original(() => parts.reduce((o, p) => o + p.serialize(wire, o), 0));
    const decode = (root?: string) => {
      const r = new J.TransactionResponse();
      r.setChrootPath(root);
      return { n: r.deserialize(wire, 0), results: r.results };
    };
    const read = (d: ReturnType<typeof decode>) => ({ ...d, results: d.results.map(asRead) });
    const fast = decode('/root');
    expect(read(fast)).toEqual(read(original(() => decode('/root'))));
    expect(fast.n).toBe(size);
    expect(fast.results[0]).toEqual({ type: J.OP_CODES.CREATE, path: '/a' });
    expect(read(decode())).toEqual(read(original(() => decode())));
    expect(decode().results[0]).toEqual({ type: J.OP_CODES.CREATE, path: '/root/a' });
  });

  it("builds a multi reply's Stats with the fast record class: no zero buffer per long", () => {
    // A claim multi's set comes back with a Stat: every claimed task decodes one.
    const parts: Rec[] = [
      new P.MultiHeader!(J.OP_CODES.SET_DATA, false, 0),
      Object.assign(new P.SetDataResponse!(), { stat: new D.Stat!() }),
      new P.MultiHeader!(-1, true, -1),
    ];
    const size = original(() => parts.reduce((n, p) => n + p.byteLength(), 0));
    const wire = Buffer.alloc(size);
    original(() => parts.reduce((o, p) => o + p.serialize(wire, o), 0));
    const r = new J.TransactionResponse();
    const alloc = vi.spyOn(Buffer, 'alloc');
    let allocs: number;
    try {
      expect(r.deserialize(wire, 0)).toBe(size);
      allocs = alloc.mock.calls.length;
    } finally {
      alloc.mockRestore();
    }
    // The library's Record gives each of a Stat's six longs a Buffer.alloc(8).
    expect(allocs).toBe(0);
    expect((r.results[0] as { stat?: unknown }).stat).toBeInstanceOf(D.Stat!);
  });

  it('builds every record class as the library does, with and without arguments', () => {
    /** An argument of the attribute's type; `other` is one of a wrong type (ignored). */
    const argFor = (type: string): unknown => {
      if (type === 'int') return 7;
      if (type === 'long') return Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]);
      if (type === 'buffer') return Buffer.from('abc');
      if (type === 'ustring') return 'text';
      if (type === 'boolean') return true;
      if (type.startsWith('vector<')) return ['a'];
      return new D[type.slice('data.'.length)]!();
    };
    const groups = { protocol: P, data: D };
    let classes = 0;
    for (const [group, classMap] of Object.entries(groups)) {
      for (const [name, Cls] of Object.entries(classMap)) {
        const spec = new Cls().specification as { name: string; type: string }[];
        const argSets = [[], spec.map((a) => argFor(a.type)), spec.map(() => 'other')];
        for (const args of argSets) {
          const fast = new Cls(...args);
          const slow = original(() => new groups[group as keyof typeof groups][name]!(...args));
          expect(fast, `${group}.${name}`).toStrictEqual(slow);
          expect(slow).toBeInstanceOf(Cls);
          expect(fast).toBeInstanceOf(original(() => groups[group as keyof typeof groups][name]!));
        }
        // Buffers are copied, as the library does: the caller's stay the caller's.
        const args = spec.map((a) => argFor(a.type));
        const rec = new Cls(...args);
        for (const [i, a] of spec.entries())
          if (Buffer.isBuffer(args[i])) {
            (args[i] as Buffer).fill(0xff);
            expect(rec[a.name]).not.toEqual(args[i]);
          }
        classes++;
      }
    }
    expect(classes).toBe(28);
  });

  it('keeps the library checks on buffer and offset', () => {
    const rec = Object.assign(new P.DeleteRequest!(), { path: '/x', version: 1 });
    expect(() => rec.serialize(Buffer.alloc(4), 0)).toThrow('buffer does not have enough space.');
    expect(() => rec.serialize(Buffer.alloc(4), 9)).toThrow('out of buffer range');
    expect(() => rec.deserialize(Buffer.alloc(4), -1)).toThrow('out of buffer range');
  });
});
