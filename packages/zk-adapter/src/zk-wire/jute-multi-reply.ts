import juteModule from 'node-zookeeper-client/lib/jute/index.js';
import { OP } from './protocol.js';

/** A multi's reply (lib/jute TransactionResponse): one result per op. */
export interface TransactionReply {
  results: Array<{ type: number; path?: string; stat?: unknown; err?: number }>;
  chrootPath?: string;
}

interface StatRecord {
  deserialize(buffer: Buffer, offset: number): number;
}
/**
 * The library's record classes, looked up at each use as the library does: the fast codec
 * (jute-speed.ts) replaces `data.Stat` with a class that builds no zero buffers, and a class
 * taken once at load would be the library's own (six `Buffer.alloc(8)` and a closure per
 * attribute for every claim's Stat).
 */
const records = (juteModule as unknown as { data: { Stat: new () => StatRecord } }).data;

// ZooKeeper's op codes a multi's reply holds (lib/jute OP_CODES).
const OP_CREATE = OP.CREATE;
const OP_DELETE = OP.DELETE;
const OP_SET_DATA = OP.SET_DATA;
const OP_CHECK = OP.CHECK;
const OP_ERROR = OP.ERROR;

/**
 * A multi's reply, decoded as the library's TransactionResponse does (the same `results`),
 * without a MultiHeader record and a response record per op: every claim and completion
 * multi of a busy worker comes back as one of these. Installed with the fast codec
 * (jute-speed.ts), whose tests compare the two.
 */
export function fastTxDeserialize(this: TransactionReply, buffer: Buffer, offset: number): number {
  if (!Buffer.isBuffer(buffer)) throw new Error('buffer must an instance of Node.js Buffer class.');
  if (offset < 0 || offset >= buffer.length)
    throw new Error(`offset: ${offset} is out of buffer range.`);
  let at = offset;
  for (;;) {
    // MultiHeader: type (int), done (boolean), err (int).
    const type = buffer.readInt32BE(at);
    const done = buffer.readUInt8(at + 4) === 1;
    at += 9;
    if (done) return at - offset;
    switch (type) {
      case OP_CREATE: {
        // CreateResponse: the created path (a ustring: -1 for none), without the chroot.
        const length = buffer.readInt32BE(at);
        at += 4;
        let path: string | undefined;
        if (length !== -1) {
          path = buffer.toString('utf8', at, at + length);
          at += length;
          const chroot = this.chrootPath;
          if (chroot) path = path === chroot ? '/' : path.substring(chroot.length);
        }
        this.results.push({ type, path });
        break;
      }
      case OP_DELETE:
      case OP_CHECK:
        this.results.push({ type });
        break;
      case OP_SET_DATA: {
        // SetDataResponse: the node's Stat record.
        const stat = new records.Stat();
        at += stat.deserialize(buffer, at);
        this.results.push({ type, stat });
        break;
      }
      case OP_ERROR:
        this.results.push({ type, err: buffer.readInt32BE(at) });
        at += 4;
        break;
      default:
        throw new Error(`Unknown type: ${type} in transaction response.`);
    }
  }
}
