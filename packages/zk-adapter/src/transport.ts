import net, { isIP } from 'node:net';
import tls from 'node:tls';
import { type ConnectVerdict, tlsErrorVerdict } from './connect-verdicts.js';
import type { ResolvedTls } from './security-options.js';
import type { LibClient } from './zk-wire/client-lib.js';
import { CM_STATE, OP, XID } from './zk-wire/protocol.js';

/**
 * The socket under one node-zookeeper-client connection: plain TCP as the library dials it,
 * or TLS to a `secureClientPort`, which the library cannot do. The library's `connect` is
 * replaced per client by the same steps on a socket of the right kind; a TLS socket hands the
 * connection to the library once its handshake is done (and the certificate checked), so
 * everything above (connect request, auth, requests, pings, the read timeout) is unchanged.
 *
 * While a caller listens (`onVerdict`, during a connect), socket failures that no retry can
 * mend are told apart: a certificate the client refuses, a TLS client on a plain port, a
 * plain client on a TLS port. The last two look alike from the failing side (the server hangs
 * up without a word), so a second connection of the other kind asks the server what it is.
 */

/** A server of the connect string, as the library holds it. */
interface Server {
  host: string;
  port: number;
}

/** The ConnectionManager fields and methods this module uses (lib/ConnectionManager.js). */
interface Manager {
  state: number;
  socket?: net.Socket;
  connectTimeout: number;
  connectTimeoutHandler: NodeJS.Timeout | null;
  connect(): void;
  setState(state: number): void;
  findNextServer(callback: (server: Server) => void): void;
  onSocketConnected(): void;
  onSocketData(buffer: Buffer): void;
  onSocketDrain(): void;
  onSocketClosed(hadError: boolean): void;
  onSocketError(error: Error): void;
  onSocketConnectTimeout(): void;
}

const CONNECTING = CM_STATE.CONNECTING;
/** How long a probe waits for the server to show what it speaks. */
const PROBE_TIMEOUT_MS = 2000;

/** Where verdicts go while a connect listens for them. */
export type VerdictSink = ((server: Server, verdict: ConnectVerdict) => void) | null;

/** A socket to `server`: TLS with the client's context, or plain TCP. */
export function dial(server: Server, secure: ResolvedTls | null): net.Socket {
  if (!secure) return net.connect({ host: server.host, port: server.port });
  return tls.connect({
    host: server.host,
    port: server.port,
    // TLS 1.2 as the floor is the context's (tls.connect reads no version option beside a
    // secureContext).
    secureContext: secure.context,
    // SNI carries names only; an address is checked against the certificate's IP entries.
    ...(isIP(server.host) === 0 ? { servername: server.host } : {}),
    ...(secure.verifyHostname ? {} : { checkServerIdentity: () => undefined }),
  });
}

/** The event after which a dialled socket may carry ZooKeeper's bytes. */
export function readyEvent(secure: ResolvedTls | null): 'connect' | 'secureConnect' {
  return secure ? 'secureConnect' : 'connect';
}

/**
 * Replaces the library's `connect` of `client`. `verdicts()` is read on every socket failure:
 * a function while a connect listens, null otherwise (no probing then). Returns a function
 * that tells the server of the latest connection.
 */
export function installTransport(
  client: LibClient,
  secure: ResolvedTls | null,
  verdicts: () => VerdictSink,
): () => Server | null {
  const cm = client.connectionManager as unknown as Manager;
  let current: Server | null = null;
  cm.connect = function connect(this: Manager) {
    this.setState(CONNECTING);
    this.findNextServer((server) => {
      current = server;
      const socket = dial(server, secure);
      this.socket = socket;
      this.connectTimeoutHandler = setTimeout(
        this.onSocketConnectTimeout.bind(this),
        this.connectTimeout,
      );
      socket.setNoDelay();
      socket.on(readyEvent(secure), this.onSocketConnected.bind(this));
      socket.on('data', this.onSocketData.bind(this));
      socket.on('drain', this.onSocketDrain.bind(this));
      socket.on('close', this.onSocketClosed.bind(this));
      socket.on('error', this.onSocketError.bind(this));
      diagnose(cm, socket, server, secure, verdicts);
    });
  }.bind(cm);
  return () => current;
}

/** Watches one socket until the server has answered the connect request. */
function diagnose(
  cm: Manager,
  socket: net.Socket,
  server: Server,
  secure: ResolvedTls | null,
  verdicts: () => VerdictSink,
): void {
  let heard = false;
  let hungUp = false;
  socket.once('data', () => {
    heard = true;
  });
  socket.once('end', () => {
    hungUp = true;
  });
  socket.once('error', (err: NodeJS.ErrnoException) => {
    const sink = verdicts();
    if (!sink) return;
    const verdict = secure ? tlsErrorVerdict(err) : null;
    if (verdict) sink(server, verdict);
    else if (err.code === 'ECONNRESET') hungUp = true;
  });
  socket.once('close', () => {
    const sink = verdicts();
    // Only a server that hung up before saying anything, while the client waited for its
    // handshake; a socket the client closed itself (its timeouts) proves nothing.
    if (!sink || heard || !hungUp || cm.socket !== socket) return;
    if (secure)
      void speaksPlainZooKeeper(server).then((plain) => {
        if (plain && verdicts())
          sink(server, {
            kind: 'tls-to-plain-port',
            text: "the port speaks plain ZooKeeper, not TLS: it is a clientPort; connect to the server's secureClientPort, or without TLS",
          });
      });
    else
      void speaksTls(server).then((speaks) => {
        if (speaks && verdicts())
          sink(server, {
            kind: 'plain-to-tls-port',
            text: "the port expects TLS (a secureClientPort): connect with TLS, or to the server's plain clientPort",
          });
      });
  });
}

/** Whether `server` completes a TLS handshake (any certificate: this only asks what it speaks). */
function speaksTls(server: Server): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: server.host,
      port: server.port,
      rejectUnauthorized: false,
      ...(isIP(server.host) === 0 ? { servername: server.host } : {}),
    });
    const done = (yes: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(yes);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}

/**
 * Whether `server` answers a plain ZooKeeper connect request. The probe's session is closed
 * in the same write (a closeSession right behind the connect request), so it leaves nothing.
 */
function speaksPlainZooKeeper(server: Server): Promise<boolean> {
  const connect = Buffer.alloc(4 + 4 + 8 + 4 + 8 + 4 + 16);
  let offset = connect.writeInt32BE(connect.length - 4, 0);
  offset = connect.writeInt32BE(0, offset); // protocol version
  offset = connect.writeBigInt64BE(0n, offset); // last zxid seen
  offset = connect.writeInt32BE(PROBE_TIMEOUT_MS * 2, offset); // session timeout
  offset = connect.writeBigInt64BE(0n, offset); // session id: a new one
  connect.writeInt32BE(16, offset); // password length, then 16 zero bytes
  const close = Buffer.alloc(12);
  close.writeInt32BE(8, 0);
  close.writeInt32BE(XID.CLOSE, 4);
  close.writeInt32BE(OP.CLOSE_SESSION, 8);
  return new Promise((resolve) => {
    const socket = net.connect({ host: server.host, port: server.port });
    let got = Buffer.alloc(0);
    const done = (yes: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(yes);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.once('connect', () => socket.write(Buffer.concat([connect, close])));
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      // A connect response: protocol version, timeout, session id, password: 36 bytes at least.
      if (got.length >= 4) done(got.readInt32BE(0) >= 36 && got.readInt32BE(0) < 1024);
    });
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}
