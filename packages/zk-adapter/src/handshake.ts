import type { LibClient } from './client-lib.js';

/** The ConnectionManager fields this module touches (lib/ConnectionManager.js). */
interface Manager {
  servers: readonly unknown[];
  sessionTimeout: number;
  connectTimeout: number;
  updateTimeout(sessionTimeout: number): void;
}

/** At least this many handshakes fit in one session timeout... */
const HANDSHAKES_PER_SESSION = 3;
/**
 * ...but none is given up sooner than this (nor later than the library would): a busy server
 * may take a moment to answer, and a short session has room for one handshake only anyway.
 */
const MIN_HANDSHAKE_MS = 2000;

/**
 * Bounds how long the client waits for a server to answer its connect request. The library
 * allows sessionTimeout / servers, with one server the whole session timeout: a server that
 * accepts the connection but never answers it (one that is restarting, has bound its port and
 * not yet loaded its database; a half-open connection) then holds the client until the session
 * is lost, although the next connection would have worked. A third of the session per
 * handshake leaves room for at least three attempts in every session timeout of 6 s or more.
 */
export function boundHandshake(client: LibClient): void {
  const cm = client.connectionManager as unknown as Manager;
  const bound = () => {
    const library = Math.floor(cm.sessionTimeout / cm.servers.length);
    const share = Math.floor(cm.sessionTimeout / HANDSHAKES_PER_SESSION);
    cm.connectTimeout = Math.min(library, Math.max(share, MIN_HANDSHAKE_MS));
  };
  // The library recomputes connectTimeout from every negotiated session timeout.
  const update = cm.updateTimeout;
  cm.updateTimeout = function updateTimeout(this: Manager, sessionTimeout: number) {
    update.call(this, sessionTimeout);
    bound();
  };
  bound();
}
