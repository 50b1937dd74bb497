import net from 'node:net';
import { ZoottError } from '@zoott/core';
import { parseConnectString } from './connect-string.js';
import { sessionCredentials, type ZkCoordinator } from './zk-coordinator.js';

const ATTEMPTS = 5;

/**
 * Test aid: expires `client`'s session from the server side, the way ZooKeeper's own tests
 * do: a second connection presents the same session id and password and closes the session.
 * The server drops every connection of the session, and `client` learns on its next contact
 * that the session expired. Resolves once `client` reports `lost`.
 */
export async function killSession(
  client: ZkCoordinator,
  options: KillSessionOptions = {},
): Promise<void> {
  if (options.silence) return killSilenced(client, options.silence, options.via);
  const { hosts } = parseConnectString(options.via ?? client.connectString);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const creds = liveCredentials(client);
    if (creds === 'lost') return;
    const lost = waitLost(client, learnWithinMs(client));
    const host = hosts[(attempt - 1) % hosts.length]!;
    await closeSessionAs(host, creds.id, creds.password, client.sessionTimeoutMs);
    // The client may win its session back by reconnecting between our connect and close;
    // then the close was a no-op and we try again.
    if (await lost) return;
  }
  throw new ZoottError('WAIT_TIMEOUT', 'the client kept its session through killSession', {
    op: 'killSession',
  });
}

/**
 * How long a client whose session was closed may take to learn it: its next handshake (the
 * library's reconnect pause, then up to a third of the session timeout, see `handshake.ts`)
 * and a margin. A fixed 3 s was too short for a 30-s session on a loaded machine: five
 * attempts passed while the client was still on its way back (bench --quick, CI).
 */
function learnWithinMs(client: ZkCoordinator): number {
  return Math.max(3000, Math.ceil(client.sessionTimeoutMs / 3) + 2000);
}

/** Options of {@link killSession}. */
export interface KillSessionOptions {
  /** The server(s) to close the session on, when the client reaches them another way. */
  via?: string;
  /**
   * Cuts the client off (`true`) and lets it through again (`false`), e.g. a proxy's
   * partition. The session is closed while the client hears nothing, as when a server expires
   * a session whose client went silent: the client cannot win the session back meanwhile,
   * nor see its own ephemeral nodes go before it learns that the session is lost.
   */
  silence?: (on: boolean) => void;
}

async function killSilenced(
  client: ZkCoordinator,
  silence: (on: boolean) => void,
  via: string | undefined,
): Promise<void> {
  const creds = liveCredentials(client);
  if (creds === 'lost') return;
  const { hosts } = parseConnectString(via ?? client.connectString);
  silence(true);
  try {
    await closeSessionAs(hosts[0]!, creds.id, creds.password, client.sessionTimeoutMs);
  } finally {
    silence(false);
  }
  // Cut off, the client could not have reconnected: its next contact finds the session gone.
  if (!(await waitLost(client, client.sessionTimeoutMs * 2))) {
    throw new ZoottError('WAIT_TIMEOUT', 'the client did not learn that its session ended', {
      op: 'killSession',
    });
  }
}

/** The session's credentials; 'lost' when it is gone already; an error for any other state. */
function liveCredentials(client: ZkCoordinator) {
  const creds = sessionCredentials(client);
  if (creds) return creds;
  if (client.state === 'lost') return 'lost' as const;
  throw new ZoottError(
    'BAD_ARGUMENTS',
    `killSession needs a connected client (state is ${client.state})`,
    { op: 'killSession' },
  );
}

function waitLost(client: ZkCoordinator, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (client.state === 'lost') return resolve(true);
    const timer = setTimeout(() => {
      off();
      resolve(client.state === 'lost');
    }, ms);
    const off = client.onSession((e) => {
      if (e.type === 'lost') {
        clearTimeout(timer);
        off();
        resolve(true);
      }
    });
  });
}

/**
 * Opens a raw connection that reattaches to the session and sends closeSession in the same
 * write, so the server handles both back to back. Resolves when the server hangs up.
 */
function closeSessionAs(
  host: { host: string; port: number },
  id: Buffer,
  password: Buffer,
  timeoutMs: number,
): Promise<void> {
  const connect = Buffer.alloc(4 + 8 + 4 + 8 + 4 + password.length);
  let o = connect.writeInt32BE(0, 0); // protocol version
  o = connect.writeBigInt64BE(0n, o); // last zxid seen
  o = connect.writeInt32BE(timeoutMs, o);
  o += id.copy(connect, o);
  o = connect.writeInt32BE(password.length, o);
  password.copy(connect, o);
  const close = Buffer.alloc(8);
  close.writeInt32BE(1, 0); // xid
  close.writeInt32BE(-11, 4); // closeSession
  return new Promise((resolve) => {
    const socket = net.connect(host);
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('connect', () => socket.write(Buffer.concat([frame(connect), frame(close)])));
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
}

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}
