import net from 'node:net';
import { parseHostPort } from './ports.js';

/**
 * A TCP proxy between ZooKeeper clients and one server, for tests that need the network to
 * misbehave: drop every connection, go silent (a partition), or lose one reply in flight.
 */
export interface ZkProxy {
  /** `127.0.0.1:port` to give clients instead of the server's address. */
  readonly hostPort: string;
  /** Closes every connection through the proxy; clients see a connection loss and reconnect. */
  dropConnections(): void;
  /**
   * While on, nothing passes in either direction and new connections get no answer: a
   * network partition, in which the client only notices silence. Turning it off closes the
   * connections that were silenced, so clients reconnect on a clean stream.
   */
  setPartitioned(on: boolean): void;
  /**
   * The next connection the proxy accepts is held open and never answered, as by a server that
   * has bound its port but not loaded its database yet (restarting); later connections pass.
   * Resolves with how long it was held (ms) once it closes: how long the client waited.
   */
  holdNextConnection(): Promise<number>;
  /** As holdNextConnection, for the next `count` connections: how long each was held, in order. */
  holdNextConnections(count: number): Promise<number[]>;
  /**
   * Arms the proxy to lose the next reply from the server whose xid matches (by default any
   * reply to a request: xid >= 0, not pings or watch events): that frame is not delivered and
   * the connection is cut, as if the network failed after the server applied the request.
   * Resolves once a reply has been lost. TLS connections pass through sealed: their replies
   * cannot be told apart, and none of them is ever lost.
   */
  loseNextReply(match?: (xid: number) => boolean): Promise<void>;
  /** Number of client connections open right now. */
  readonly connections: number;
  close(): Promise<void>;
}

/** The first byte of a TLS handshake record (a ClientHello). */
const TLS_HANDSHAKE = 0x16;

interface Pair {
  client: net.Socket;
  server: net.Socket;
}

/** Keeps `client` open and unanswered; `report` gets how long it was held once it closes. */
function holdConnection(
  client: net.Socket,
  held: Set<net.Socket>,
  report: (heldMs: number) => void,
): void {
  const since = Date.now();
  held.add(client);
  // Read and drop what comes: a socket nobody reads never sees the client hang up.
  client.resume();
  client.on('error', () => client.destroy());
  client.on('close', () => {
    held.delete(client);
    report(Date.now() - since);
  });
}

/**
 * Starts a proxy on a free port of 127.0.0.1 forwarding to `target` (`host:port`): a plain
 * client port, or a TLS one (a client checking the server's certificate must accept it for
 * 127.0.0.1, the proxy's address).
 */
export async function startProxy(target: string): Promise<ZkProxy> {
  const { host, port } = parseHostPort(target);
  const pairs = new Set<Pair>();
  const held = new Set<net.Socket>();
  /** Connections still to hold, and what each held one reports when it closes. */
  let toHold = 0;
  let heldReport: ((heldMs: number) => void) | null = null;
  let partitioned = false;
  let lose: { match: (xid: number) => boolean; done: () => void } | null = null;

  const listener = net.createServer((client) => {
    if (toHold > 0 && heldReport) {
      toHold--;
      holdConnection(client, held, heldReport);
      return;
    }
    const server = net.connect({ host, port });
    const pair: Pair = { client, server };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', end);
    server.on('error', end);
    client.on('close', end);
    server.on('close', end);
    // A TLS connection (its first byte opens a TLS handshake record; a ZooKeeper frame opens
    // with a length under 16 MiB, a zero byte) passes through as it is: its frames are sealed.
    let tls: boolean | null = null;
    client.on('data', (chunk) => {
      if (tls === null) tls = chunk[0] === TLS_HANDSHAKE;
      if (!partitioned) server.write(chunk);
    });
    // Server-to-client bytes are split into ZooKeeper frames (4-byte length + body) so that a
    // single reply can be held back. The first frame of a connection is the connect response.
    let pending = Buffer.alloc(0);
    let first = true;
    server.on('data', (chunk) => {
      if (partitioned) return;
      if (tls) {
        client.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        const frame = pending.subarray(0, 4 + size);
        pending = pending.subarray(4 + size);
        if (!first && lose && size >= 4 && lose.match(frame.readInt32BE(4))) {
          const { done } = lose;
          lose = null;
          end();
          done();
          return;
        }
        first = false;
        client.write(frame);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  listener.unref();
  const address = listener.address() as net.AddressInfo;

  const dropAll = () => {
    for (const { client, server } of pairs) {
      client.destroy();
      server.destroy();
    }
    pairs.clear();
    for (const client of held) client.destroy();
    held.clear();
  };

  const holdNextConnections = (count: number) =>
    new Promise<number[]>((resolve) => {
      const each: number[] = [];
      toHold = count;
      heldReport = (ms) => {
        each.push(ms);
        if (each.length === count) resolve(each);
      };
    });

  return {
    hostPort: `127.0.0.1:${address.port}`,
    get connections() {
      return pairs.size;
    },
    dropConnections: dropAll,
    setPartitioned(on: boolean) {
      if (partitioned && !on) dropAll();
      partitioned = on;
    },
    holdNextConnection() {
      return holdNextConnections(1).then((each) => each[0]!);
    },
    holdNextConnections,
    loseNextReply(match = (xid: number) => xid >= 0) {
      return new Promise<void>((resolve) => {
        lose = { match, done: resolve };
      });
    },
    async close() {
      dropAll();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
