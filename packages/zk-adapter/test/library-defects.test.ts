import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { bytes, freshNamespace, open, text } from './helpers.js';

/**
 * Defects of node-zookeeper-client 1.1.3, fixed by patches/node-zookeeper-client@1.1.3.patch.
 * Each test here fails on the unpatched library.
 */
describe('patched node-zookeeper-client', () => {
  it('treats expected version 0 in a multi check/set/delete as version 0, not "any"', async () => {
    const zk = await open(await freshNamespace());
    await zk.create('/v', bytes('a'));
    await zk.set('/v', bytes('b')); // version is now 1
    for (const op of [
      { op: 'check', path: '/v', version: 0 },
      { op: 'set', path: '/v', data: bytes('c'), version: 0 },
      { op: 'delete', path: '/v', version: 0 },
    ] as const) {
      await expect(zk.multi([op])).rejects.toMatchObject({ code: 'BAD_VERSION', opIndex: 0 });
    }
    expect(text((await zk.get('/v')).data)).toBe('b');
    // ...and on a node never written since creation, version 0 matches.
    await zk.create('/fresh');
    await expect(
      zk.multi([
        { op: 'check', path: '/fresh', version: 0 },
        { op: 'set', path: '/fresh', data: bytes('x'), version: 0 },
      ]),
    ).resolves.toHaveLength(2);
  });

  it('accepts setData(null) as "no data" instead of throwing', async () => {
    const zk = await open(await freshNamespace());
    await zk.create('/n', bytes('something'));
    const stat = await zk.set('/n', null as unknown as Uint8Array);
    expect(stat.dataLength).toBe(0);
    expect((await zk.get('/n')).data).toEqual(new Uint8Array(0));
  });

  it('maps a server error code it does not know to UNKNOWN_SERVER_ERROR instead of crashing', async () => {
    const fake = await fakeServer(-125);
    try {
      const zk = await open(fake.hostPort, { requestTimeoutMs: 3000 });
      await expect(zk.get('/x')).rejects.toMatchObject({
        code: 'UNKNOWN_SERVER_ERROR',
        op: 'get',
        path: '/x',
        message: expect.stringContaining('-125'),
      });
      fake.errorCode = -118;
      await expect(zk.exists('/y')).rejects.toMatchObject({ code: 'SESSION_MOVED' });
    } finally {
      await fake.close();
    }
  });
});

/**
 * A minimal ZooKeeper impostor: accepts the session, answers pings, and answers every other
 * request with `errorCode`, as a newer server would with a code this client never heard of.
 */
async function fakeServer(errorCode: number) {
  const sockets = new Set<net.Socket>();
  const state = { errorCode };
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
        const header = Buffer.alloc(16);
        header.writeInt32BE(xid, 0);
        header.writeBigInt64BE(1n, 4);
        header.writeInt32BE(xid === -2 ? 0 : state.errorCode, 12);
        socket.write(frame(header));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    hostPort: `127.0.0.1:${port}`,
    set errorCode(code: number) {
      state.errorCode = code;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}
