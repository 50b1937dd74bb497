import { ZoottError } from '@zoott/core';
import { parseConnectString } from './connect-string.js';
import type { ResolvedTls } from './security-options.js';
import { dial, readyEvent } from './transport.js';
import { sessionCredentials, sessionTls, type ZkCoordinator } from './zk-coordinator.js';
import { OP, XID } from './zk-wire/protocol.js';

const CLOSE_XID = XID.CLOSE;

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
  // A server that closes a session drops the connection at once, often before its replies go
  // out: a try rarely hears a verdict. The next try's reattach does (a session the server
  // closed is answered with a timeout of 0). A try that closed nothing (the client won its
  // session back by reconnecting between our connect and close) is followed by another.
  const giveUpAt = Date.now() + client.sessionTimeoutMs * 2;
  // Listening from the start: a client that renews its session at once (a worker daemon does)
  // may be past `lost` before a try returns.
  const lost = lostWatch(client);
  try {
    for (let attempt = 0; Date.now() < giveUpAt; attempt++) {
      if (lost.seen()) return;
      const creds = liveCredentials(client);
      if (creds === 'lost') return;
      const host = hosts[attempt % hosts.length]!;
      const closed = await closeSessionAs(
        host,
        creds.id,
        creds.password,
        client.sessionTimeoutMs,
        sessionTls(client),
      );
      if (closed) {
        // Gone on the server: the client learns it on its next contact.
        if (await lost.within(client.sessionTimeoutMs * 2)) return;
        break;
      }
      if (await lost.within(RETRY_PAUSE_MS)) return;
    }
  } finally {
    lost.off();
  }
  throw new ZoottError('WAIT_TIMEOUT', 'the client kept its session through killSession', {
    op: 'killSession',
  });
}

/** Whether `client` has reported `lost` since this was called, and a wait for it. */
function lostWatch(client: ZkCoordinator) {
  let seen = client.state === 'lost';
  let wake = () => {};
  const off = client.onSession((event) => {
    if (event.type !== 'lost') return;
    seen = true;
    wake();
  });
  const within = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (seen) return resolve(true);
      const timer = setTimeout(() => resolve(seen), ms);
      wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  return { seen: () => seen, within, off };
}

/** Between two tries: the server's close of the session is a transaction of its own. */
const RETRY_PAUSE_MS = 20;

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
  const lost = lostWatch(client);
  try {
    silence(true);
    try {
      await closeSessionAs(
        hosts[0]!,
        creds.id,
        creds.password,
        client.sessionTimeoutMs,
        sessionTls(client),
      );
    } finally {
      silence(false);
    }
    // Cut off, the client could not have reconnected: its next contact finds the session gone.
    if (!(await lost.within(client.sessionTimeoutMs * 2))) {
      throw new ZoottError('WAIT_TIMEOUT', 'the client did not learn that its session ended', {
        op: 'killSession',
      });
    }
  } finally {
    lost.off();
  }
}

/** The session's credentials; 'lost' when it is gone already; an error for any other state. */
function liveCredentials(client: ZkCoordinator) {
  const creds = sessionCredentials(client);
  if (creds) return creds;
  if (client.state === 'lost') return 'lost' as const;
  throw new ZoottError(
    'BAD_ARGUMENTS',
    `killSession needs a client with a session, connected or between connections (state is ${client.state})`,
    { op: 'killSession' },
  );
}

/**
 * Opens a raw connection that reattaches to the session and sends closeSession in the same
 * write, so the server handles both back to back. Resolves when the server hangs up, with
 * whether the session is certainly gone: the close was answered without an error, or the
 * reattach found the session expired (a negotiated timeout of 0).
 * @internal Exported for its tests.
 */
export function closeSessionAs(
  host: { host: string; port: number },
  id: Buffer,
  password: Buffer,
  timeoutMs: number,
  tls: ResolvedTls | null = null,
): Promise<boolean> {
  const connect = Buffer.alloc(4 + 8 + 4 + 8 + 4 + password.length);
  let offset = connect.writeInt32BE(0, 0); // protocol version
  offset = connect.writeBigInt64BE(0n, offset); // last zxid seen
  offset = connect.writeInt32BE(timeoutMs, offset);
  offset += id.copy(connect, offset);
  offset = connect.writeInt32BE(password.length, offset);
  password.copy(connect, offset);
  const close = Buffer.alloc(8);
  close.writeInt32BE(CLOSE_XID, 0);
  close.writeInt32BE(OP.CLOSE_SESSION, 4); // closeSession
  return new Promise((resolve) => {
    let gone = false;
    let frames = 0;
    let pending = Buffer.alloc(0);
    // Over TLS when the client uses it: a secure port takes nothing else.
    const socket = dial(host, tls);
    socket.setTimeout(5000, () => socket.destroy());
    socket.on(readyEvent(tls), () => socket.write(Buffer.concat([frame(connect), frame(close)])));
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const body = pending.subarray(4, 4 + pending.readInt32BE(0));
        pending = pending.subarray(4 + body.length);
        // The connect response (protocol version, negotiated timeout, ...), then the close's
        // reply header (xid, zxid, error code).
        if (frames++ === 0) gone ||= body.length >= 8 && body.readInt32BE(4) <= 0;
        else if (body.length >= 16 && body.readInt32BE(0) === CLOSE_XID) {
          gone ||= body.readInt32BE(12) === 0;
          socket.destroy(); // answered: nothing more to hear
        }
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(gone));
  });
}

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}
