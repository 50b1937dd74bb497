import net from 'node:net';

/**
 * A minimal ZooKeeper impostor for what no real server here can show (a newer server's
 * unknown error code, an older server's missing operation): it accepts the session, answers
 * pings, and answers every other request with the reply header's error code that
 * `answer(opType)` chooses, followed by `body` when it gives one. It counts the requests it
 * saw per op type.
 */
export interface FakeServer {
  hostPort: string;
  /** Requests seen, by op type (4 getData, 3 exists, 22 multiRead, ...). */
  readonly seen: Map<number, number>;
  /** Replaces the rule that picks each reply. */
  answer: Answer;
  /** Cuts every client connection; the server keeps listening (clients reconnect). */
  dropConnections(): void;
  close(): Promise<void>;
}

/** A reply's error code, or the code and the reply's payload bytes. */
export type Answer = (opType: number) => number | { err: number; body: Buffer };

/** The payload of an empty multi or multiRead reply: only the closing header. */
export const EMPTY_MULTI_REPLY = Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff]);

export async function fakeServer(answer: Answer): Promise<FakeServer> {
  const sockets = new Set<net.Socket>();
  const fake = { seen: new Map<number, number>(), answer } as FakeServer;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    let connected = false;
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const size = pending.readInt32BE(0);
        const body = pending.subarray(4, 4 + size);
        pending = pending.subarray(4 + size);
        if (!connected) {
          connected = true;
          const reply = Buffer.alloc(4 + 4 + 8 + 4 + 16);
          reply.writeInt32BE(0, 0); // protocol version
          reply.writeInt32BE(10_000, 4); // negotiated timeout
          reply.writeBigInt64BE(0x1234n, 8); // session id
          reply.writeInt32BE(16, 16); // password length, then 16 zero bytes
          socket.write(frame(reply));
          continue;
        }
        const xid = body.readInt32BE(0);
        const type = body.readInt32BE(4);
        if (xid !== -2) fake.seen.set(type, (fake.seen.get(type) ?? 0) + 1);
        const a = xid === -2 ? 0 : fake.answer(type);
        const header = Buffer.alloc(16);
        header.writeInt32BE(xid, 0);
        header.writeBigInt64BE(1n, 4);
        header.writeInt32BE(typeof a === 'number' ? a : a.err, 12);
        socket.write(frame(typeof a === 'number' ? header : Buffer.concat([header, a.body])));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  fake.hostPort = `127.0.0.1:${port}`;
  fake.dropConnections = () => {
    for (const s of sockets) s.destroy();
  };
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return fake;
}

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}
