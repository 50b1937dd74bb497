import type { LibClient } from './client-lib.js';
import { CM_STATE, OP } from './protocol.js';

/**
 * Faster socket I/O for one node-zookeeper-client connection, installed per client before it
 * connects. Profiling a pipelined load showed the library spending most of its time in the
 * socket layer: it writes every request with its own `socket.write` (one syscall each), and
 * it re-copies the whole unread rest of a received chunk once per reply it parses (quadratic
 * in the replies per chunk), re-arming its read timer per reply as well.
 *
 * - Writes: requests queued during one event-loop turn go out as ONE write (setImmediate
 *   flush). Order, xids and the pending queue are exactly as the library keeps them.
 * - Reads: incoming bytes are cut into whole frames here and handed to the library one frame
 *   at a time, so it never buffers or re-copies; the read timer is re-armed once per chunk.
 */

/** The ConnectionManager fields this module touches (lib/ConnectionManager.js). */
interface Packet {
  request: { header: { type: number; xid: number } | null; toBuffer(): Buffer };
}
interface Manager {
  state: number;
  xid: number;
  socket?: { destroyed: boolean; writableNeedDrain: boolean; write(chunk: Buffer): boolean };
  packetQueue: {
    shift(): Packet | undefined;
    removeAllListeners(event: string): void;
    on(event: string, fn: () => void): void;
  };
  pendingQueue: Packet[];
  readTimer: unknown;
  /** performance.now() of the last write: what the keep-alive (keep-alive.ts) counts from. */
  sentAt: number;
  /** performance.now() of the last bytes received: the session's `lastReplyAt`. */
  heardAt?: number;
  connectTimeout: number;
  sessionTimeout: number;
  onPacketQueueReadable(): void;
  onSocketData(buffer: Buffer): void;
  armReadTimer(ms: number): void;
}

// lib/ConnectionManager.js STATES and jute OP_CODES the flush needs.
const CONNECTING = CM_STATE.CONNECTING;
const CONNECTED = CM_STATE.CONNECTED;
const CONNECTED_READ_ONLY = CM_STATE.CONNECTED_READ_ONLY;
const CLOSING = CM_STATE.CLOSING;
const OP_PING = OP.PING;
const OP_AUTH = OP.AUTH;
const OP_CLOSE_SESSION = OP.CLOSE_SESSION;

export function installFastWire(client: LibClient): void {
  const cm = client.connectionManager as unknown as Manager;
  const proto = Object.getPrototypeOf(cm) as Manager;
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const state = cm.state;
    if (state !== CONNECTED && state !== CONNECTED_READ_ONLY && state !== CLOSING) return;
    const socket = cm.socket;
    // Back pressure: the socket's 'drain' calls onPacketQueueReadable again.
    if (!socket || socket.destroyed || socket.writableNeedDrain) return;
    const out: Buffer[] = [];
    let size = 0;
    for (;;) {
      const packet = cm.packetQueue.shift();
      if (packet === undefined) break;
      const header = packet.request.header;
      if (header !== null && header.type !== OP_PING && header.type !== OP_AUTH) {
        header.xid = cm.xid;
        cm.xid += 1;
        cm.pendingQueue.push(packet);
      }
      const bytes = packet.request.toBuffer();
      out.push(bytes);
      size += bytes.length;
      // The close request is the last one a session ever sends.
      if (header?.type === OP_CLOSE_SESSION) break;
      // Keep single writes moderate so one huge burst does not hold everything in memory twice.
      if (size >= 1 << 20) {
        scheduleFlush();
        break;
      }
    }
    if (out.length === 0) return;
    if (out.length === 1) socket.write(out[0]!);
    else socket.write(Buffer.concat(out, size));
    cm.sentAt = performance.now();
  };
  const scheduleFlush = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };

  // The library's own listener writes at once per request; replace it.
  cm.packetQueue.removeAllListeners('readable');
  cm.packetQueue.on('readable', scheduleFlush);
  cm.onPacketQueueReadable = scheduleFlush;

  installLazyReadTimer(cm);

  let rest: Buffer[] = [];
  let restBytes = 0;
  let restSocket: unknown = null;
  cm.onSocketData = function onSocketData(chunk: Buffer) {
    const socket = cm.socket;
    if (restSocket !== socket) {
      rest = [];
      restBytes = 0;
      restSocket = socket;
    }
    if (chunk.length === 0) return;
    cm.heardAt = performance.now();
    if (cm.readTimer)
      cm.armReadTimer(
        cm.state === CONNECTING ? cm.connectTimeout : Math.floor((cm.sessionTimeout * 2) / 3),
      );
    let buf = chunk;
    if (restBytes > 0) {
      rest.push(chunk);
      restBytes += chunk.length;
      // Not even the next frame is complete yet: keep collecting without copying.
      if (restBytes < 4 + (rest[0]!.length >= 4 ? rest[0]!.readInt32BE(0) : 0)) return;
      buf = Buffer.concat(rest, restBytes);
      rest = [];
      restBytes = 0;
    }
    let off = 0;
    while (buf.length - off >= 4) {
      const size = buf.readInt32BE(off);
      if (buf.length - off < size + 4) break;
      const frame = buf.subarray(off, off + size + 4);
      off += size + 4;
      // Hide the read timer so the library does not re-arm it per frame (done above).
      const timer = cm.readTimer;
      cm.readTimer = null;
      try {
        proto.onSocketData.call(cm, frame);
      } finally {
        // The connect response arms a timer of its own: then the hidden one is obsolete.
        if (cm.readTimer === null) cm.readTimer = timer;
        else if (timer) clearTimeout(timer as NodeJS.Timeout);
      }
      // The library destroys the socket on a protocol error: ignore what is left of it.
      if (cm.socket !== socket || socket?.destroyed) return;
    }
    if (off < buf.length) {
      rest = [buf.subarray(off)];
      restBytes = buf.length - off;
    }
  };
}

/**
 * The read timeout (the library's patched `armReadTimer`): the server must be heard from
 * within a timeout, else the socket is closed. The library re-armed it per chunk received: a
 * clearTimeout, a setTimeout and an unref, about 3% of a worker's CPU at a paced 200 tasks/s.
 * Here a chunk only notes when it came; the one timer, when it fires, looks at that note and
 * sleeps again for what is left of the timeout, or closes the socket.
 */
function installLazyReadTimer(cm: Manager): void {
  let heardAt = 0;
  let readTimeout = 0;
  cm.armReadTimer = (timeout: number) => {
    heardAt = performance.now();
    readTimeout = timeout;
    if (cm.readTimer) return;
    const socket = cm.socket;
    const check = () => {
      const silent = performance.now() - heardAt;
      if (silent < readTimeout) {
        cm.readTimer = setTimeout(check, Math.ceil(readTimeout - silent)).unref();
        return;
      }
      cm.readTimer = null;
      if (cm.socket === socket) (socket as { destroy(): void } | undefined)?.destroy();
    };
    cm.readTimer = setTimeout(check, timeout).unref();
  };
}
