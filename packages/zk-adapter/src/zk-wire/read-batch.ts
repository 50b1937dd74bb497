import type { LibClient, LibStat } from './client-lib.js';
import { lib } from './client-lib.js';
import { jute } from './jute-speed.js';
import { ERR, OP } from './protocol.js';

/**
 * Plain reads (getData without a watch) issued in one turn of the event loop, sent to the
 * server as ONE multiRead request (ZooKeeper 3.6+, op code 22) instead of one request each.
 *
 * Why: a draining worker reads one pending entry per task, and those reads were nearly nine
 * in ten of its requests. Every request costs both sides a frame, a socket write, a reply and
 * its callbacks; a multiRead of 32 entries pays that once. Each read in it still succeeds or
 * fails on its own (a NO_NODE for one entry leaves the others' data), so a batched read
 * answers exactly what the same read sent alone would have answered at that point.
 *
 * Order: every request of a client goes through its ConnectionManager's `queue`. A batch is
 * sent when the current turn's synchronous code and microtasks are done, or at once, ahead of
 * it, when any other request is queued first. So no request ever overtakes a read issued
 * before it, and the server sees the same sequence it would have seen unbatched.
 *
 * Servers before 3.6 do not know multiRead (they answer UNIMPLEMENTED). A client therefore
 * sends one empty multiRead the first time it would batch, and reads one by one until that
 * probe has answered; a refusal keeps it on single reads for good.
 */

/** A read's callback: the library's error, or the node's data and stat. */
export type ReadDone = (error: unknown, data?: Buffer, stat?: LibStat) => void;

/** Most reads in one multiRead: bounds the reply when entries carry large data. */
export const MAX_BATCHED_READS = 32;

const MULTI_READ = OP.MULTI_READ;
const GET_DATA = OP.GET_DATA;
const ERROR = OP.ERROR;
const UNIMPLEMENTED = ERR.UNIMPLEMENTED;
const CONNECTION_LOSS = ERR.CONNECTION_LOSS;
const RUNTIME_INCONSISTENCY = ERR.RUNTIME_INCONSISTENCY;

interface Manager {
  queue(request: unknown, callback?: (error: unknown, reply: unknown) => void): void;
}
interface Record_ {
  setChrootPath(path: string | undefined): void;
  deserialize(buffer: Buffer, offset: number): number;
  [field: string]: unknown;
}
interface Protocol {
  Request: new (header: unknown, payload: unknown) => { replyPayload?: () => unknown };
  TransactionRequest: { prototype: object };
  protocol: Record<string, new (...args: unknown[]) => Record_>;
}
interface LibExceptions {
  Exception: { create(code: number, path?: string): unknown };
}

const typedJute = jute as unknown as Protocol;
const exceptions = lib as unknown as LibExceptions;

/** One read of a batch: its path and callback. */
interface Read {
  path: string;
  done: ReadDone;
}

/** One answer of a multiRead reply: an error code, or the node's data and stat. */
type Answer = { err: number } | { data: Buffer | undefined; stat: LibStat };

/** The decoder of a multiRead reply: MultiHeader + GetDataResponse or ErrorResponse, repeated. */
class MultiReadReply {
  readonly answers: Answer[] = [];
  setChrootPath(): void {
    // Data replies carry no paths.
  }
  deserialize(buffer: Buffer, offset: number): number {
    let read = 0;
    for (;;) {
      const header = new typedJute.protocol.MultiHeader!();
      read += header.deserialize(buffer, offset + read);
      if (header.done) return read;
      if (header.type === GET_DATA) {
        const response = new typedJute.protocol.GetDataResponse!();
        read += response.deserialize(buffer, offset + read);
        this.answers.push({
          data: response.data as Buffer | undefined,
          stat: response.stat as LibStat,
        });
      } else if (header.type === ERROR) {
        const response = new typedJute.protocol.ErrorResponse!();
        read += response.deserialize(buffer, offset + read);
        this.answers.push({ err: response.err as number });
      } else {
        throw new Error(`multiRead reply: unexpected op type ${String(header.type)}`);
      }
    }
  }
}

/** A multiRead request of `paths` (none: the capability probe). */
function multiReadRequest(paths: readonly string[]): unknown {
  const records: Record_[] = [];
  for (const path of paths) {
    records.push(new typedJute.protocol.MultiHeader!(GET_DATA, false, -1));
    const get = new typedJute.protocol.GetDataRequest!();
    get.path = path;
    get.watch = false;
    records.push(get);
  }
  records.push(new typedJute.protocol.MultiHeader!(ERROR, true, -1));
  // The library's transaction payload serialises any list of records in order, with the
  // connection's chroot in front of every path; its constructor knows only write ops.
  const payload = Object.create(typedJute.TransactionRequest.prototype) as { records: Record_[] };
  payload.records = records;
  const header = new typedJute.protocol.RequestHeader!();
  header.type = MULTI_READ;
  const request = new typedJute.Request(header, payload);
  request.replyPayload = () => new MultiReadReply();
  return request;
}

/** The batcher of one library client (a renewed session has a new client, a new batcher). */
class ReadBatcher {
  private reads: Read[] = [];
  private scheduled = false;
  /** Whether the server answers multiRead: unknown until the probe has answered. */
  private support: 'unknown' | 'probing' | 'yes' | 'no' = 'unknown';
  private readonly send: Manager['queue'];
  private readonly flushNow = () => this.flush();

  private readonly single: (path: string, done: ReadDone) => void;

  constructor(client: LibClient, alone: SendAlone) {
    const manager = client.connectionManager as unknown as Manager;
    this.single = (path, done) => alone(client, path, undefined, done);
    this.send = manager.queue.bind(manager);
    // Every other request sends the reads issued before it first: order is kept.
    manager.queue = (request, callback) => {
      if (this.reads.length > 0) this.flush();
      this.send(request, callback);
    };
  }

  add(path: string, done: ReadDone): void {
    this.reads.push({ path, done });
    if (this.reads.length >= MAX_BATCHED_READS) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.flushNow);
    }
  }

  private flush(): void {
    this.scheduled = false;
    const reads = this.reads;
    if (reads.length === 0) return;
    this.reads = [];
    if (reads.length === 1 || this.support !== 'yes') {
      if (reads.length > 1 && this.support === 'unknown') this.probe();
      for (const read of reads) this.single(read.path, read.done);
      return;
    }
    this.send(multiReadRequest(reads.map((r) => r.path)), (error, reply) => {
      if (error) return this.failed(reads, error);
      const answers = (reply as { payload: MultiReadReply }).payload.answers;
      for (let i = 0; i < reads.length; i++) {
        const answer = answers[i];
        const read = reads[i]!;
        if (answer === undefined)
          read.done(exceptions.Exception.create(RUNTIME_INCONSISTENCY, read.path));
        else if ('err' in answer) read.done(exceptions.Exception.create(answer.err, read.path));
        else read.done(null, answer.data, answer.stat);
      }
    });
  }

  /** A whole batch failed: the connection, the session, or a server without multiRead. */
  private failed(reads: readonly Read[], error: unknown): void {
    const code = (error as { code?: number }).code;
    if (code === UNIMPLEMENTED) {
      // This server does not know multiRead (an ensemble mid-upgrade, say): read alone now
      // and from then on. These reads go out after requests issued since the batch.
      this.support = 'no';
      for (const read of reads) this.single(read.path, read.done);
      return;
    }
    // The next server may be another: ask again before the next batch.
    if (code === CONNECTION_LOSS) this.support = 'unknown';
    for (const read of reads) read.done(error);
  }

  /**
   * One empty multiRead: answered by 3.6+ servers, refused (UNIMPLEMENTED) before. Any
   * failure keeps this client on single reads: an old server's refusal can overtake replies
   * still due and cost the connection, which must not happen again and again.
   */
  private probe(): void {
    this.support = 'probing';
    this.send(multiReadRequest([]), (error) => {
      this.support = error ? 'no' : 'yes';
    });
  }
}

const batchers = new WeakMap<LibClient, ReadBatcher>();

/** Sends one read on its own: the fallback, and a batch of one (direct-reads.ts). */
export type SendAlone = (
  client: LibClient,
  path: string,
  watcher: undefined,
  done: ReadDone,
) => void;

/**
 * Queues a plain read of `path` (already checked, no watch) into this client's next batch.
 * `alone` sends one read by itself; the batcher made for the client's first read keeps it.
 */
export function batchedRead(
  client: LibClient,
  path: string,
  done: ReadDone,
  alone: SendAlone,
): void {
  let batcher = batchers.get(client);
  if (!batcher) {
    batcher = new ReadBatcher(client, alone);
    batchers.set(client, batcher);
  }
  batcher.add(path, done);
}
