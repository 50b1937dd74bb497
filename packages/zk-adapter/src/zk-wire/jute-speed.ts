// A static import, so the adapter's build bundles this module together with the rest of the
// patched library: at run time the codec below replaces the very copy the client uses.
import juteModule from 'node-zookeeper-client/lib/jute/index.js';
import { fastTxDeserialize, type TransactionReply } from './jute-multi-reply.js';

/**
 * Faster encoding and decoding for node-zookeeper-client's jute records: the same bytes and
 * the same decoded objects, with a fraction of the garbage. Installed once per process, before
 * the first client connects.
 *
 * Why: an allocation profile of a busy worker (100,000 pending tasks, 128 claims in flight)
 * put about half of everything it allocated in the library's jute module. Per attribute it
 * runs a regular expression over the type name (a match array each time), allocates a closure
 * per `forEach`, re-computes the byte length of every nested record once per nesting level,
 * copies every string through `Buffer.from`, and gives every 64-bit field a fresh, zero-filled
 * `Buffer.alloc(8)` with its own backing store. That garbage is what grows a worker's heap and
 * RSS under load, and collecting it is CPU the server and the handlers would rather have.
 *
 * Here, type names are parsed once per distinct string, byte lengths are computed once per
 * request, strings are written in place, and small buffers come from Node's pool
 * (`Buffer.allocUnsafe`, every byte then overwritten). The library's own functions stay
 * reachable through {@link juteOriginals}, which the tests use to check byte-for-byte
 * equality.
 */

/** One attribute of a record specification (lib/jute/specification.json). */
interface Attribute {
  name: string;
  type: string;
}

/** The parts of a jute Record this module reads and writes. */
interface JuteRecord {
  specification: Attribute[];
  chrootPath?: string;
  [field: string]: unknown;
}

interface RecordProto {
  byteLength(this: JuteRecord): number;
  serialize(this: JuteRecord, buffer: Buffer, offset: number): number;
  deserialize(this: JuteRecord, buffer: Buffer, offset: number): number;
}

interface RequestLike {
  header: { byteLength(): number; serialize(buffer: Buffer, offset: number): number } | null;
  payload: { byteLength(): number; serialize(buffer: Buffer, offset: number): number } | null;
}

interface TransactionLike {
  records: JuteRecord[];
}

interface JuteModule {
  Request: { prototype: { toBuffer(this: RequestLike): Buffer } };
  TransactionRequest: {
    prototype: {
      byteLength(this: TransactionLike): number;
      serialize(this: TransactionLike, buffer: Buffer, offset: number): number;
    };
  };
  TransactionResponse: {
    prototype: {
      deserialize(this: TransactionReply, buffer: Buffer, offset: number): number;
    };
  };
  data: Record<string, new (...args: unknown[]) => JuteRecord>;
  protocol: Record<string, new (...args: unknown[]) => JuteRecord>;
}

/** The library's jute module: the very instance its connection manager uses. */
export const jute = juteModule as unknown as JuteModule;
const recordProto = Object.getPrototypeOf(jute.data.Id!.prototype) as RecordProto;

/** The library's own implementations, as they were before {@link installFastJute}. */
export const juteOriginals = {
  byteLength: recordProto.byteLength,
  serialize: recordProto.serialize,
  deserialize: recordProto.deserialize,
  toBuffer: jute.Request.prototype.toBuffer,
  txByteLength: jute.TransactionRequest.prototype.byteLength,
  txSerialize: jute.TransactionRequest.prototype.serialize,
  txDeserialize: jute.TransactionResponse.prototype.deserialize,
};

const INT = 0;
const LONG = 1;
const BUFFER = 2;
const USTRING = 3;
const BOOLEAN = 4;
const VECTOR = 5;
const DATA = 6;

interface Kind {
  tag: number;
  /** Element kind of a vector. */
  item?: Kind;
  /** Class name of a nested record (`data.<name>`). */
  cls?: string;
}

const kinds = new Map<string, Kind>();

function kindOf(type: string): Kind {
  let kind = kinds.get(type);
  if (kind) return kind;
  const vector = /^vector<([\w.]+)>$/.exec(type);
  const data = /^data\.(\w+)$/.exec(type);
  if (type === 'int') kind = { tag: INT };
  else if (type === 'long') kind = { tag: LONG };
  else if (type === 'buffer') kind = { tag: BUFFER };
  else if (type === 'ustring') kind = { tag: USTRING };
  else if (type === 'boolean') kind = { tag: BOOLEAN };
  else if (vector) kind = { tag: VECTOR, item: kindOf(vector[1]!) };
  else if (data) kind = { tag: DATA, cls: data[1]! };
  else throw new Error(`Unknown type: ${type}`);
  kinds.set(type, kind);
  return kind;
}

/** Watch lists are sent with the chroot prepended, like the `path` attribute. */
const isWatchList = (name: string) =>
  name === 'dataWatches' || name === 'existWatches' || name === 'childWatches';

function withChroot(chroot: string | undefined, path: string): string {
  if (!chroot) return path;
  return path === '/' ? chroot : chroot + path;
}

/** The value an attribute is sent as (chroot applied to paths and watch lists). */
function outgoing(rec: JuteRecord, name: string): unknown {
  const value = rec[name];
  const chroot = rec.chrootPath;
  if (!chroot) return value;
  if (name === 'path') return withChroot(chroot, value as string);
  if (isWatchList(name) && Array.isArray(value))
    return (value as string[]).map((p) => withChroot(chroot, p));
  return value;
}

function valueLength(kind: Kind, value: unknown): number {
  switch (kind.tag) {
    case INT:
      return 4;
    case LONG:
      return 8;
    case BUFFER:
      return Buffer.isBuffer(value) ? 4 + value.length : 4;
    case USTRING:
      return typeof value === 'string' ? 4 + Buffer.byteLength(value) : 4;
    case BOOLEAN:
      return 1;
    case VECTOR: {
      let size = 4;
      if (Array.isArray(value))
        for (let i = 0; i < value.length; i++) size += valueLength(kind.item!, value[i]);
      return size;
    }
    default:
      return recordLength(value as JuteRecord);
  }
}

function recordLength(rec: JuteRecord): number {
  let size = 0;
  const spec = rec.specification;
  for (let i = 0; i < spec.length; i++) {
    const field = spec[i]!;
    size += valueLength(kindOf(field.type), outgoing(rec, field.name));
  }
  return size;
}

function writeValue(kind: Kind, value: unknown, buf: Buffer, offset: number): number {
  switch (kind.tag) {
    case INT:
      buf.writeInt32BE(value as number, offset);
      return 4;
    case LONG:
      (value as Buffer).copy(buf, offset);
      return 8;
    case BUFFER:
      if (!Buffer.isBuffer(value)) {
        buf.writeInt32BE(-1, offset);
        return 4;
      }
      buf.writeInt32BE(value.length, offset);
      value.copy(buf, offset + 4);
      return 4 + value.length;
    case USTRING: {
      if (typeof value !== 'string') {
        buf.writeInt32BE(-1, offset);
        return 4;
      }
      const written = buf.write(value, offset + 4, 'utf8');
      buf.writeInt32BE(written, offset);
      return 4 + written;
    }
    case BOOLEAN:
      buf.writeUInt8(value ? 1 : 0, offset);
      return 1;
    case VECTOR: {
      if (!Array.isArray(value)) {
        buf.writeInt32BE(-1, offset);
        return 4;
      }
      buf.writeInt32BE(value.length, offset);
      let written = 4;
      for (let i = 0; i < value.length; i++)
        written += writeValue(kind.item!, value[i], buf, offset + written);
      return written;
    }
    default:
      return writeRecord(value as JuteRecord, buf, offset);
  }
}

function writeRecord(rec: JuteRecord, buf: Buffer, offset: number): number {
  let written = 0;
  const spec = rec.specification;
  for (let i = 0; i < spec.length; i++) {
    const field = spec[i]!;
    written += writeValue(kindOf(field.type), outgoing(rec, field.name), buf, offset + written);
  }
  return written;
}

/** A pooled copy of `length` bytes: small ones share Node's 8 KiB slab instead of owning one. */
function copyOut(buf: Buffer, start: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  buf.copy(out, 0, start, start + length);
  return out;
}

/** Decodes one value; the byte count comes back through `read[0]`. */
function readValue(kind: Kind, buf: Buffer, offset: number, read: number[]): unknown {
  switch (kind.tag) {
    case INT:
      read[0] = 4;
      return buf.readInt32BE(offset);
    case LONG:
      read[0] = 8;
      return copyOut(buf, offset, 8);
    case BUFFER: {
      const length = buf.readInt32BE(offset);
      if (length === -1) {
        read[0] = 4;
        return undefined;
      }
      read[0] = 4 + length;
      return copyOut(buf, offset + 4, length);
    }
    case USTRING: {
      const length = buf.readInt32BE(offset);
      if (length === -1) {
        read[0] = 4;
        return undefined;
      }
      read[0] = 4 + length;
      return buf.toString('utf8', offset + 4, offset + 4 + length);
    }
    case BOOLEAN:
      read[0] = 1;
      return buf.readUInt8(offset) === 1;
    case VECTOR: {
      let count = buf.readInt32BE(offset);
      if (count === -1) {
        read[0] = 4;
        return undefined;
      }
      let used = 4;
      const out: unknown[] = [];
      while (count > 0) {
        out.push(readValue(kind.item!, buf, offset + used, read));
        used += read[0]!;
        count -= 1;
      }
      read[0] = used;
      return out;
    }
    default: {
      const Cls = jute.data[kind.cls!];
      if (!Cls) throw new Error(`Unknown type: data.${kind.cls}`);
      const rec = new Cls();
      read[0] = fastDeserialize.call(rec, buf, offset);
      return rec;
    }
  }
}

function fastByteLength(this: JuteRecord): number {
  return recordLength(this);
}

function fastSerialize(this: JuteRecord, buffer: Buffer, offset: number): number {
  if (!Buffer.isBuffer(buffer)) throw new Error('buffer must an instance of Node.js Buffer class.');
  if (offset < 0 || offset >= buffer.length)
    throw new Error(`offset: ${offset} is out of buffer range.`);
  const size = recordLength(this);
  if (offset + size > buffer.length) throw new Error('buffer does not have enough space.');
  writeRecord(this, buffer, offset);
  return size;
}

/**
 * Where readValue leaves the byte count of what it read: one array for every call, since each
 * caller takes the count right after the call it made (nested reads finish before that).
 */
const bytesRead = [0];

/**
 * A Stat's 64-bit fields but its owner, decoded straight to numbers (what `longOf` makes of
 * them: exact below 2^53, which zxids and times stay under) instead of a Buffer each: every
 * read and every `set` in a multi brings a Stat back, five Buffers a piece. `ephemeralOwner`
 * (a session id, which needs all 64 bits) stays bytes, one shared zero for the many nodes
 * that are not ephemeral (nothing writes into a decoded Stat).
 */
const STAT_NUMBER_LONGS = new Set(['czxid', 'mzxid', 'ctime', 'mtime', 'pzxid']);
const NOT_EPHEMERAL = Buffer.alloc(8);
let statProto: object | null = null;

function readStatLong(name: string, buf: Buffer, offset: number): unknown {
  if (STAT_NUMBER_LONGS.has(name))
    return buf.readInt32BE(offset) * 0x1_0000_0000 + buf.readUInt32BE(offset + 4);
  if (buf.readUInt32BE(offset) === 0 && buf.readUInt32BE(offset + 4) === 0) return NOT_EPHEMERAL;
  return copyOut(buf, offset, 8);
}

function fastDeserialize(this: JuteRecord, buffer: Buffer, offset: number): number {
  if (!Buffer.isBuffer(buffer)) throw new Error('buffer must an instance of Node.js Buffer class.');
  if (offset < 0 || offset >= buffer.length)
    throw new Error(`offset: ${offset} is out of buffer range.`);
  if (statProto !== null && Object.getPrototypeOf(this) === statProto)
    return deserializeStat(this, buffer, offset);
  const read = bytesRead;
  let used = 0;
  const chroot = this.chrootPath;
  const spec = this.specification;
  for (let i = 0; i < spec.length; i++) {
    const field = spec[i]!;
    this[field.name] = readValue(kindOf(field.type), buffer, offset + used, read);
    used += read[0]!;
    // Paths come back with the chroot; the caller sees them relative to it.
    if (chroot && field.name === 'path') {
      const path = this.path as string;
      this.path = path === chroot ? '/' : path.substring(chroot.length);
    }
  }
  return used;
}

function deserializeStat(rec: JuteRecord, buffer: Buffer, offset: number): number {
  const spec = rec.specification;
  let used = 0;
  for (let i = 0; i < spec.length; i++) {
    const field = spec[i]!;
    if (kindOf(field.type).tag === LONG) {
      rec[field.name] = readStatLong(field.name, buffer, offset + used);
      used += 8;
    } else {
      rec[field.name] = buffer.readInt32BE(offset + used);
      used += 4;
    }
  }
  return used;
}

function fastTxByteLength(this: TransactionLike): number {
  let size = 0;
  const records = this.records;
  for (let i = 0; i < records.length; i++) size += recordLength(records[i]!);
  return size;
}

function fastTxSerialize(this: TransactionLike, buffer: Buffer, offset: number): number {
  let written = 0;
  const records = this.records;
  for (let i = 0; i < records.length; i++)
    written += writeRecord(records[i]!, buffer, offset + written);
  return written;
}

function fastToBuffer(this: RequestLike): Buffer {
  const size = (this.header?.byteLength() ?? 0) + (this.payload?.byteLength() ?? 0);
  const buffer = Buffer.allocUnsafe(size + 4);
  buffer.writeInt32BE(size, 0);
  let offset = 4;
  if (this.header) offset += this.header.serialize(buffer, offset);
  if (this.payload) offset += this.payload.serialize(buffer, offset);
  // Every byte of the unzeroed buffer must have been written, or old pool bytes would go out.
  if (offset !== size + 4)
    throw new Error(`jute: wrote ${offset - 4} bytes of a ${size}-byte request`);
  return buffer;
}

type RecordClass = new (...args: unknown[]) => JuteRecord;
/** The library's Record, which every record class inherits from. */
const RecordBase = recordProto.constructor as RecordClass;

/** The one zero `long` of records built without one (see `initial`). */
const ZERO_LONG = Buffer.alloc(8);

/** The initial value of one attribute, from the constructor's argument `v` (as the library). */
function initial(kind: Kind, value: unknown): unknown {
  switch (kind.tag) {
    case INT:
      return typeof value === 'number' ? value : 0;
    case LONG: {
      // Without a value, every record shares one zero: a reply's records are built empty and
      // then decoded (each decoded long a copy of its own), so a fresh zero per field, six
      // per Stat and built twice per reply, was pure garbage. Nothing writes into a record's
      // long in place: the library and the adapter read them, or replace them whole.
      if (!Buffer.isBuffer(value)) return ZERO_LONG;
      const out = Buffer.allocUnsafe(8);
      value.copy(out, 0, 0, 8);
      if (value.length < 8) out.fill(0, value.length);
      return out;
    }
    case BUFFER:
      return Buffer.isBuffer(value) ? copyOut(value, 0, value.length) : undefined;
    case USTRING:
      return typeof value === 'string' ? value : undefined;
    case BOOLEAN:
      return typeof value === 'boolean' ? value : false;
    case VECTOR:
      return Array.isArray(value) ? value : undefined;
    default: {
      // The library keeps a nested record given as an argument (`instanceof Record`).
      if (value instanceof RecordBase) return value;
      const Cls = jute.data[kind.cls!];
      if (!Cls) throw new Error(`Unknown type: data.${kind.cls}`);
      return new Cls();
    }
  }
}

/**
 * A constructor building the same record as the library's `orig`, on the same prototype (so
 * `instanceof` holds either way), without what the library's costs per record: a closure per
 * attribute, two regular expressions per nested type, and a zero-filled `Buffer.alloc(8)`,
 * each with its own backing store, per 64-bit field (a Stat has six). Every reply and request
 * builds several records, so this is a steady share of a busy worker's CPU and garbage.
 */
function fastClass(orig: RecordClass): RecordClass {
  const spec = new orig().specification;
  const names = spec.map((a) => a.name);
  const types = spec.map((a) => kindOf(a.type));
  function FastRecord(this: JuteRecord, ...args: unknown[]): void {
    this.specification = spec;
    this.chrootPath = undefined;
    for (let i = 0; i < names.length; i++) this[names[i]!] = initial(types[i]!, args[i]);
  }
  FastRecord.prototype = orig.prototype;
  return FastRecord as unknown as RecordClass;
}

/** The record classes of `data` and `protocol`: the library's, and the faster ones. */
const recordClasses = (['data', 'protocol'] as const).flatMap((group) =>
  Object.entries(jute[group]).map(([name, orig]) => ({
    group,
    name,
    orig,
    fast: fastClass(orig),
  })),
);

/**
 * Switches between the faster functions (`true`) and the library's own. The adapter only ever
 * switches on; the tests switch back and forth to compare the two.
 */
export function useFastJute(on: boolean): void {
  const originals = juteOriginals;
  recordProto.byteLength = on ? fastByteLength : originals.byteLength;
  recordProto.serialize = on ? fastSerialize : originals.serialize;
  recordProto.deserialize = on ? fastDeserialize : originals.deserialize;
  jute.Request.prototype.toBuffer = on ? fastToBuffer : originals.toBuffer;
  jute.TransactionRequest.prototype.byteLength = on ? fastTxByteLength : originals.txByteLength;
  jute.TransactionRequest.prototype.serialize = on ? fastTxSerialize : originals.txSerialize;
  jute.TransactionResponse.prototype.deserialize = on ? fastTxDeserialize : originals.txDeserialize;
  // The library looks its classes up in these maps at every use, so this reaches all of it.
  for (const recordClass of recordClasses)
    jute[recordClass.group][recordClass.name] = on ? recordClass.fast : recordClass.orig;
  statProto = jute.data.Stat?.prototype ?? null;
}

/** Replaces the library's jute encode/decode with the faster equivalents (process-wide). */
export function installFastJute(): void {
  useFastJute(true);
}
