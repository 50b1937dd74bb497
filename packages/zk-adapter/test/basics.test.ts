import { digestAcl, isZoottError, OPEN_ACL, Perms, type WatchEvent } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { connectZk, ZK_MAX_DATA_BYTES } from '../src/index.js';
import { bytes, freshNamespace, open, text, zkServer } from './helpers.js';

describe('ZkCoordinator on a real ZooKeeper', () => {
  it('creates, reads, writes and deletes nodes with real stats', async () => {
    const zk = await open(await freshNamespace());
    expect(zk.state).toBe('connected');
    expect(zk.sessionId).toMatch(/^[0-9a-f]{16}$/);
    expect(await zk.create('/a', bytes('one'))).toBe('/a');
    const { data, stat } = await zk.get('/a');
    expect(text(data)).toBe('one');
    expect(stat.version).toBe(0);
    expect(stat.ephemeralOwner).toBeNull();
    const after = await zk.set('/a', bytes('two'), 0);
    expect(after.version).toBe(1);
    await expect(zk.set('/a', bytes('three'), 0)).rejects.toMatchObject({
      code: 'BAD_VERSION',
      op: 'set',
      path: '/a',
    });
    await zk.create('/a/child');
    await expect(zk.delete('/a')).rejects.toMatchObject({ code: 'NOT_EMPTY' });
    expect(await zk.children('/a')).toEqual(['child']);
    await zk.delete('/a/child');
    await zk.delete('/a', 1);
    expect(await zk.exists('/a')).toBeNull();
    await expect(zk.get('/a')).rejects.toMatchObject({ code: 'NO_NODE', op: 'get', path: '/a' });
  });

  it('creates ephemeral and sequential nodes', async () => {
    const zk = await open(await freshNamespace());
    const e = await zk.create('/e', undefined, { ephemeral: true });
    expect((await zk.exists(e))?.ephemeralOwner).toBe(zk.sessionId);
    await expect(zk.create('/e/x')).rejects.toMatchObject({ code: 'NO_CHILDREN_FOR_EPHEMERALS' });
    await zk.create('/q');
    const first = await zk.create('/q/n-', undefined, { sequential: true });
    const second = await zk.create('/q/n-', undefined, { sequential: true });
    expect(first).toMatch(/^\/q\/n-.*\d{10}$/);
    expect(Number(second.slice(-10))).toBeGreaterThan(Number(first.slice(-10)));
  });

  it('delivers one-shot data, child and existence watches', async () => {
    const zk = await open(await freshNamespace());
    const events: WatchEvent[] = [];
    await zk.exists('/w', { watch: (e) => events.push(e) });
    await zk.create('/w');
    await zk.children('/w', { watch: (e) => events.push(e) });
    await zk.get('/w', { watch: (e) => events.push(e) });
    await zk.create('/w/c');
    await zk.set('/w', bytes('x'));
    await zk.exists('/w'); // a round trip: every notification before it has arrived
    expect(events).toEqual([
      { type: 'created', path: '/w' },
      { type: 'childrenChanged', path: '/w' },
      { type: 'dataChanged', path: '/w' },
    ]);
  });

  it('applies a multi atomically and reports every op code on failure', async () => {
    const zk = await open(await freshNamespace());
    await zk.create('/m');
    const results = await zk.multi([
      { op: 'create', path: '/m/a', data: bytes('a') },
      { op: 'check', path: '/m', version: 0 },
      { op: 'set', path: '/m', data: bytes('m'), version: 0 },
    ]);
    expect(results[0]).toEqual({ op: 'create', path: '/m/a' });
    expect(results[2]).toMatchObject({ op: 'set', stat: { version: 1 } });
    const failure = await zk
      .multi([
        { op: 'create', path: '/m/b' },
        { op: 'delete', path: '/m/missing' },
        { op: 'create', path: '/m/c' },
      ])
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({
      code: 'NO_NODE',
      op: 'multi',
      opIndex: 1,
      opCodes: [null, 'NO_NODE', 'RUNTIME_INCONSISTENCY'],
    });
    expect(await zk.exists('/m/b')).toBeNull();
  });

  it('connects with several hosts and a chroot', async () => {
    const ns = await freshNamespace();
    const [hostPort, chroot] = [ns.slice(0, ns.indexOf('/')), ns.slice(ns.indexOf('/'))];
    // An unreachable first host: the client moves on to the next one.
    const zk = await open(`127.0.0.1:1,${hostPort}${chroot}`);
    await zk.create('/inside', bytes('x'));
    const root = await open(zkServer());
    expect(text((await root.get(`${chroot}/inside`)).data)).toBe('x');
    const events: WatchEvent[] = [];
    await zk.get('/inside', { watch: (e) => events.push(e) });
    await root.set(`${chroot}/inside`, bytes('y'));
    await zk.exists('/inside');
    expect(events).toEqual([{ type: 'dataChanged', path: '/inside' }]);
  });

  it('locks out an unauthenticated session with a digest ACL', async () => {
    const ns = await freshNamespace();
    const owner = await open(ns, { auth: [{ scheme: 'digest', auth: 'alice:secret' }] });
    const acl = [
      digestAcl('alice', 'secret', 'cdrwa'),
      { scheme: 'world', id: 'anyone', perms: 0 },
    ];
    await owner.create('/private', bytes('mine'), { acl: [acl[0]!] });
    expect((await owner.getAcl('/private')).acl).toEqual([acl[0]]);

    const stranger = await open(ns);
    await expect(stranger.get('/private')).rejects.toMatchObject({
      code: 'NO_AUTH',
      op: 'get',
      path: '/private',
    });
    await expect(stranger.set('/private', bytes('x'))).rejects.toMatchObject({ code: 'NO_AUTH' });
    await stranger.addAuth('digest', 'alice:secret');
    expect(text((await stranger.get('/private')).data)).toBe('mine');

    await owner.setAcl('/private', OPEN_ACL, 0);
    expect((await owner.getAcl('/private')).stat.aversion).toBe(1);
  });

  it('rejects bad input with clear errors before sending anything', async () => {
    const zk = await open(await freshNamespace());
    await expect(zk.create('relative')).rejects.toMatchObject({ code: 'INVALID_PATH' });
    await expect(zk.set('/x', bytes('x'), 1.5)).rejects.toMatchObject({ code: 'BAD_ARGUMENTS' });
    await expect(zk.create('/x', new Uint8Array(2_000_000))).rejects.toMatchObject({
      code: 'DATA_TOO_LARGE',
    });
    await expect(
      zk.create('/x', undefined, { acl: [{ scheme: 'world', id: 'someone', perms: Perms.ALL }] }),
    ).rejects.toMatchObject({ code: 'INVALID_ACL' });
    await expect(connectZk('')).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(connectZk(zkServer(), { sessionTimeoutMs: -1 })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      field: 'sessionTimeoutMs',
    });
  });

  it('fails a connection attempt to nowhere with CONNECTION_LOSS within the connect timeout', async () => {
    const err = await connectZk('127.0.0.1:1', { connectTimeoutMs: 500 }).catch((e: unknown) => e);
    expect(isZoottError(err, 'CONNECTION_LOSS')).toBe(true);
  });

  it('closes: the ephemerals go at once and later calls fail with CLOSED', async () => {
    const ns = await freshNamespace();
    const zk = await open(ns);
    const other = await open(ns);
    await zk.create('/eph', undefined, { ephemeral: true });
    await zk.close();
    expect(zk.state).toBe('closed');
    expect(await other.exists('/eph')).toBeNull();
    await expect(zk.get('/eph')).rejects.toMatchObject({ code: 'CLOSED' });
    await zk.close();
  });

  it('refuses a request whose path and data exceed the packet budget before sending it', async () => {
    const zk = await open(await freshNamespace());
    const events: string[] = [];
    zk.onSession((e) => events.push(e.type));
    // ZooKeeper drops the connection on a packet over jute.maxbuffer; such a request must be
    // refused up front, naming its size and the limit, and cost nothing else.
    const long = `/${'p'.repeat(2_000_000)}`;
    for (const attempt of [zk.create(long), zk.get(long), zk.exists(long)]) {
      await expect(attempt).rejects.toMatchObject({
        code: 'BAD_ARGUMENTS',
        // The frame: the path with the namespace's chroot, headers and (for create) an ACL.
        message: expect.stringMatching(/request of 200\d{4} bytes.*limit of 1048575/),
      });
    }
    // Path + data: each fits alone, together they do not.
    await expect(
      zk.create(`/${'q'.repeat(2000)}`, new Uint8Array(ZK_MAX_DATA_BYTES)),
    ).rejects.toMatchObject({ code: 'BAD_ARGUMENTS' });
    // Multi: the sum over the ops counts.
    const half = `/${'m'.repeat(600_000)}`;
    await expect(
      zk.multi([
        { op: 'create', path: half },
        { op: 'create', path: `${half}x` },
      ]),
    ).rejects.toMatchObject({ code: 'BAD_ARGUMENTS', op: 'multi' });
    expect(await zk.create('/after', bytes('ok'))).toBe('/after');
    expect(events).toEqual([]);
    expect(zk.state).toBe('connected');
  });
});
