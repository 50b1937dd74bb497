import { type Coordinator, isZoottError, utf8, ZoottError } from '@zoott/core';
import {
  decodeIdentifier,
  encodeIdentifier,
  Lock,
  LockTimeout,
  parseLockId,
} from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { describe, expect, it, vi } from 'vitest';

/** Resolves when `check` holds, re-checking on every macrotask turn (bounded by the test timeout). */
async function eventually(check: () => boolean): Promise<void> {
  while (!check()) await new Promise<void>((r) => setTimeout(r, 10));
}

describe('lock node data', () => {
  it('is zkutil JSON, read back from zkutil (spaced JSON) and bare-string forms', () => {
    expect(utf8.decode(encodeIdentifier({ id: 'web-1', val: null }))).toBe(
      '{"id":"web-1","val":null}',
    );
    expect(decodeIdentifier(utf8.encode('{"id": "py-1", "val": {"a": 1}}'))).toEqual({
      id: 'py-1',
      val: { a: 1 },
    });
    expect(decodeIdentifier(utf8.encode('web-10.0.0.1-7-0000000001'))).toEqual({
      id: 'web-10.0.0.1-7-0000000001',
      val: null,
    });
  });
});

describeOnBackends('Lock', (backend) => {
  it('creates /lock/<name> holding the JSON identifier, and deletes it on release', async () => {
    const zk = await backend().connect();
    const lock = new Lock('foo', { coordinator: zk, conf: { nodeId: 'web-01' } });
    expect(lock.path).toBe('/lock/foo');
    await lock.acquire();
    expect(lock.isLocked()).toBe(true);
    const { data, stat } = await zk.get('/lock/foo');
    expect(JSON.parse(utf8.decode(data))).toEqual({ id: lock.identifier.id, val: null });
    expect(parseLockId(lock.identifier.id).nodeId).toBe('web-01');
    expect(stat.ephemeralOwner).toBe(zk.sessionId);
    await lock.release();
    expect(lock.isLocked()).toBe(false);
    expect(await zk.exists('/lock/foo')).toBeNull();
    await lock.release(); // releasing twice is harmless
  });

  it('never lets two holders in at once (N contenders, shared counter)', async () => {
    const contenders = 6;
    const rounds = 3;
    const clients = await Promise.all(
      Array.from({ length: contenders }, () => backend().connect()),
    );
    let inside = 0;
    let maxInside = 0;
    let entries = 0;
    await Promise.all(
      clients.map(async (zk) => {
        const lock = new Lock('race', { coordinator: zk, timeoutMs: 60_000 });
        for (let i = 0; i < rounds; i++) {
          await lock.acquire();
          inside += 1;
          entries += 1;
          maxInside = Math.max(maxInside, inside);
          await zk.exists('/lock/race'); // yield to the others while holding
          inside -= 1;
          await lock.release();
        }
      }),
    );
    expect(maxInside).toBe(1);
    expect(entries).toBe(contenders * rounds);
  });

  it('tryAcquire and tryRelease report [ok, holder, version] without waiting', async () => {
    const a = new Lock('t', { coordinator: await backend().connect() });
    const b = new Lock('t', { coordinator: await backend().connect() });
    expect(await a.tryAcquire()).toEqual([true, a.identifier.id, -1]);
    expect(await b.tryAcquire()).toEqual([false, a.identifier.id, 0]);
    expect(await b.tryRelease()).toEqual([false, a.identifier.id, 0]);
    expect(await a.tryRelease()).toEqual([true, a.identifier.id, 0]);
    expect(await a.tryRelease()).toEqual([true, a.identifier.id, -1]); // nobody holds it
    expect(await b.tryAcquire()).toEqual([true, b.identifier.id, -1]);
    await b.release();
  });

  it('acquireLoop yields the holder while waiting; acquire times out with LockTimeout', async () => {
    const zk = await backend().connect();
    const a = new Lock('w', { coordinator: zk });
    const b = new Lock('w', { coordinator: await backend().connect() });
    await a.acquire();
    const seen: Array<[string | null, number]> = [];
    for await (const [holder, version] of b.acquireLoop(60_000)) {
      seen.push([holder, version]);
      await a.release();
    }
    expect(seen).toEqual([[a.identifier.id, 0]]);
    expect(b.isLocked()).toBe(true);

    const err = await a.acquire(50).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockTimeout);
    expect(isZoottError(err, 'LOCK_TIMEOUT')).toBe(true);
    await expect(a.acquire(-1)).rejects.toBeInstanceOf(LockTimeout); // negative: one try
    await b.release();
    await a.acquire(-1);
    expect(a.isLocked()).toBe(true);
    await a.release();
  });

  it('recognises its own node after a create whose reply was lost', async () => {
    const zk = await backend().connect();
    const flaky = Object.create(zk) as Coordinator;
    flaky.create = async (path, data, options) => {
      await zk.create(path, data, options);
      throw new ZoottError('CONNECTION_LOSS', 'reply lost (simulated)', { op: 'create', path });
    };
    const lock = new Lock('lost-reply', { coordinator: flaky });
    await zk.create('/lock');
    await lock.acquire(1_000);
    expect(lock.isLocked()).toBe(true);
    expect(decodeIdentifier((await zk.get('/lock/lost-reply')).data).id).toBe(lock.identifier.id);
    await lock.release();
  });

  it('a session that expires frees the lock for others and calls onLost', async () => {
    const a = await backend().connect();
    const onLost = vi.fn();
    const held = new Lock('exp', { coordinator: a, onLost });
    await held.acquire();
    const waiter = new Lock('exp', { coordinator: await backend().connect() });
    const acquired = waiter.acquire(60_000);
    acquired.catch(() => undefined); // awaited below; keeps a failed expiry from leaving it unhandled
    await backend().expireSession(a);
    await acquired;
    expect(waiter.isLocked()).toBe(true);
    await eventually(() => onLost.mock.calls.length > 0);
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(onLost).toHaveBeenCalledWith('session');
    expect(held.isLocked()).toBe(false);
    await waiter.release();
  });

  it('calls onLost when someone else deletes the held node', async () => {
    const zk = await backend().connect();
    const admin = await backend().connect();
    const onLost = vi.fn();
    const lock = new Lock('stolen', { coordinator: zk, onLost });
    await lock.acquire();
    await admin.delete('/lock/stolen');
    await eventually(() => onLost.mock.calls.length > 0);
    expect(onLost).toHaveBeenCalledWith('node');
    expect(lock.isLocked()).toBe(false);
  });

  it('a persistent lock survives its session and is recognised by its identifier', async () => {
    const a = await backend().connect();
    const first = new Lock('p', { coordinator: a, ephemeral: false, identifier: 'job-7' });
    await first.acquire();
    await a.close();
    const b = await backend().connect();
    expect((await b.get('/lock/p')).stat.ephemeralOwner).toBeNull();
    const other = new Lock('p', { coordinator: b });
    expect((await other.tryAcquire())[0]).toBe(false);
    const recovered = new Lock('p', { coordinator: b, ephemeral: false, identifier: 'job-7' });
    await recovered.acquire(-1);
    expect(recovered.isLocked()).toBe(true);
    await recovered.release();
    expect(await b.exists('/lock/p')).toBeNull();
  });

  it('writes { id, val } when given an identifier object', async () => {
    const zk = await backend().connect();
    const lock = new Lock('v', { coordinator: zk, identifier: { id: 'me', val: { step: 2 } } });
    await lock.acquire();
    expect(JSON.parse(utf8.decode((await zk.get('/lock/v')).data))).toEqual({
      id: 'me',
      val: { step: 2 },
    });
    await lock.release();
  });

  it('opens its own connection from a config and closes it on release; await using releases', async () => {
    const opened: Coordinator[] = [];
    const connect = async () => {
      const c = await backend().connect();
      opened.push(c);
      return c;
    };
    const observer = await backend().connect();
    {
      await using lock = new Lock('own', {
        conf: { hosts: 'somewhere:2181', lockDir: '/my/locks/' },
        connect,
        onLost: () => undefined,
      });
      await lock.acquire();
      expect(await observer.exists('/my/locks/own')).not.toBeNull();
    }
    expect(await observer.exists('/my/locks/own')).toBeNull();
    expect(opened).toHaveLength(1);
    expect(opened[0]?.state).toBe('closed');
    expect(() => new Lock('x', { connect })).toThrow(/onLost/);
    expect(() => new Lock('x', { onLost: () => undefined })).toThrow(/connect/);
  });
});
