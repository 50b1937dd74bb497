import type { LibClient } from './client-lib.js';
import { jute } from './jute-speed.js';
import { CM_STATE, OP, XID } from './protocol.js';

/**
 * The keep-alive of one node-zookeeper-client connection, driven by what the client SENDS.
 *
 * The server expires a session one timeout after it last received a packet from the client;
 * packets it sends the client do not count. The library pings from the socket's idle timer
 * (`socket.setTimeout`), which every byte in either direction resets: a session that only
 * receives (a worker with nothing to do, holding watches over a busy world) never pinged, and
 * a notification every few hundred milliseconds got it expired though the connection was fine.
 *
 * Here one timer per client looks at when the client last wrote to the socket (`sentAt`, kept
 * by the write path in wire.ts) and queues a ping once a third of the session timeout has
 * passed without a write, as the Java client does; any request sent meanwhile counts as one.
 * The library's own idle-socket ping is switched off.
 */

/** The ConnectionManager fields this module touches (lib/ConnectionManager.js). */
interface Manager {
  state: number;
  /** A third of the session timeout; the library recomputes it from the negotiated timeout. */
  pingTimeout: number;
  /** performance.now() of the last write to the socket (wire.ts). */
  sentAt: number;
  socket?: { setTimeout(ms: number): void };
  queue(request: unknown): void;
  onSocketTimeout(): void;
  on(event: 'state', listener: (state: number) => void): void;
}

interface Protocol {
  Request: new (header: unknown, payload: null) => unknown;
  protocol: { RequestHeader: new (xid: number, type: number) => unknown };
}

// lib/ConnectionManager.js STATES, lib/jute XID_PING and OP_CODES.PING.
const CONNECTED = CM_STATE.CONNECTED;
const CONNECTED_READ_ONLY = CM_STATE.CONNECTED_READ_ONLY;
const XID_PING = XID.PING;
const OP_PING = OP.PING;

export function installKeepAlive(client: LibClient): void {
  const cm = client.connectionManager as unknown as Manager;
  const typedJute = jute as unknown as Protocol;
  cm.sentAt = performance.now();
  // The library arms the socket's idle timer with this on every connection: disarm it instead.
  cm.onSocketTimeout = function onSocketTimeout(this: Manager) {
    this.socket?.setTimeout(0);
  };

  let timer: NodeJS.Timeout | null = null;
  const connected = () => cm.state === CONNECTED || cm.state === CONNECTED_READ_ONLY;
  const check = () => {
    timer = null;
    if (!connected()) return;
    const interval = cm.pingTimeout;
    const quiet = performance.now() - cm.sentAt;
    if (quiet >= interval) {
      cm.queue(
        new typedJute.Request(new typedJute.protocol.RequestHeader(XID_PING, OP_PING), null),
      );
      // The ping goes out on the next write turn; count from now, not from that write.
      cm.sentAt = performance.now();
      timer = setTimeout(check, interval).unref();
    } else {
      timer = setTimeout(check, Math.ceil(interval - quiet)).unref();
    }
  };
  cm.on('state', (state) => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (state !== CONNECTED && state !== CONNECTED_READ_ONLY) return;
    // The connect request and the session's first packets have just been written.
    cm.sentAt = performance.now();
    timer = setTimeout(check, cm.pingTimeout).unref();
  });
}
