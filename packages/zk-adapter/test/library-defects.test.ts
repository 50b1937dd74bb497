import { describe, expect, it } from 'vitest';
import { fakeServer } from './fake-server.js';
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
    const fake = await fakeServer(() => -125);
    try {
      const zk = await open(fake.hostPort, { requestTimeoutMs: 3000 });
      await expect(zk.get('/x')).rejects.toMatchObject({
        code: 'UNKNOWN_SERVER_ERROR',
        op: 'get',
        path: '/x',
        message: expect.stringContaining('-125'),
      });
      fake.answer = () => -118;
      await expect(zk.exists('/y')).rejects.toMatchObject({ code: 'SESSION_MOVED' });
    } finally {
      await fake.close();
    }
  });
});
