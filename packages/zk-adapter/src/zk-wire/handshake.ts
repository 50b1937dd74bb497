import type { LibClient } from './client-lib.js';
import { CM_STATE } from './protocol.js';

/** The ConnectionManager fields this module touches (lib/ConnectionManager.js). */
interface Manager {
  servers: readonly unknown[];
  state: number;
  sessionTimeout: number;
  connectTimeout: number;
  updateTimeout(sessionTimeout: number): void;
  onSocketConnected(): void;
  onSocketClosed(hadError: boolean): void;
  on(event: 'state', listener: (state: number) => void): void;
}

// lib/ConnectionManager.js STATES.
const CONNECTING = CM_STATE.CONNECTING;
const CONNECTED = CM_STATE.CONNECTED;
const CONNECTED_READ_ONLY = CM_STATE.CONNECTED_READ_ONLY;

/** At least this many handshakes fit in one session timeout... */
const HANDSHAKES_PER_SESSION = 3;
/**
 * ...but none is given up sooner than this (nor later than the library would): a busy server
 * may take a moment to answer, and a short session has room for one handshake only anyway.
 */
const MIN_HANDSHAKE_MS = 2000;
/**
 * The first handshake after a connection (or the first ever) gets this long. A server that
 * holds a handshake unanswered is most often one still starting, whose next connection is
 * answered at once; each held handshake doubles the wait of the next, up to the bound above,
 * so a server that is merely slow still gets all the time it needs.
 */
const FIRST_HANDSHAKE_MS = 500;

/**
 * Bounds how long the client waits for a server to answer its connect request. The library
 * allows sessionTimeout / servers, with one server the whole session timeout: a server that
 * accepts the connection but never answers it (one that is restarting, has bound its port and
 * not yet loaded its database; a half-open connection) then holds the client until the session
 * is lost, although the next connection would have worked. A third of the session per
 * handshake leaves room for at least three attempts in every session timeout of 6 s or more;
 * the first attempts after a loss get less (see FIRST_HANDSHAKE_MS), so a client is back
 * within about half a second of a restarting server taking sessions, not two.
 */
export function boundHandshake(client: LibClient): void {
  const cm = client.connectionManager as unknown as Manager;
  let next = FIRST_HANDSHAKE_MS;
  /** When the TCP connection of the attempt under way came up (null: not up). */
  let tcpAt: number | null = null;
  const bound = () => {
    const library = Math.floor(cm.sessionTimeout / cm.servers.length);
    const share = Math.floor(cm.sessionTimeout / HANDSHAKES_PER_SESSION);
    const full = Math.min(library, Math.max(share, MIN_HANDSHAKE_MS));
    cm.connectTimeout = Math.min(next, full);
  };
  // The library recomputes connectTimeout from every negotiated session timeout.
  const update = cm.updateTimeout;
  cm.updateTimeout = function updateTimeout(this: Manager, sessionTimeout: number) {
    update.call(this, sessionTimeout);
    bound();
  };
  // The library binds these when it opens each socket: instance properties replace them.
  const connected = cm.onSocketConnected;
  cm.onSocketConnected = function onSocketConnected(this: Manager) {
    tcpAt = performance.now();
    connected.call(this);
  };
  const closed = cm.onSocketClosed;
  cm.onSocketClosed = function onSocketClosed(this: Manager, hadError: boolean) {
    // Given up while still waiting for the connect response, the whole bound long: the
    // handshake was held. (A server that closes at once, still starting, is no reason.)
    if (tcpAt !== null && this.state === CONNECTING) {
      if (performance.now() - tcpAt >= this.connectTimeout * 0.9) {
        next *= 2;
        bound();
      }
    }
    tcpAt = null;
    closed.call(this, hadError);
  };
  cm.on('state', (state) => {
    if (state === CONNECTED || state === CONNECTED_READ_ONLY) {
      tcpAt = null;
      next = FIRST_HANDSHAKE_MS;
      bound();
    }
  });
  bound();
}
