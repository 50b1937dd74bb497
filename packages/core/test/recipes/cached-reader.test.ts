import { type Coordinator, isZoottError, utf8 } from '@zoott/core';
import { CachedReader, WaitTimeout } from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';

const json = (v: unknown) => utf8.encode(JSON.stringify(v));

describeOnBackends('CachedReader', (backend) => {
  it('is a dict-like view of the node that follows its changes', async () => {
    const zk = await backend().connect();
    const writer = await backend().connect();
    await writer.create('/bar', json({ jobs: { num: 10 }, old: true }));
    const calls: unknown[] = [];
    const cr = await CachedReader.open<{ jobs: { num: number }; old?: boolean }>(zk, '/bar', {
      callback: (path, previous, current) => calls.push([path, previous, current]),
    });
    expect(cr.get('jobs')).toEqual({ num: 10 });
    expect(cr.value.jobs.num).toBe(10);
    expect([...cr.keys()].sort()).toEqual(['jobs', 'old']);

    const next = cr.watch(60_000);
    await writer.set('/bar', json({ jobs: { num: 20 } }));
    expect(await next).toEqual([{ jobs: { num: 10 }, old: true }, { jobs: { num: 20 } }]);
    expect(cr.has('old')).toBe(false);
    expect(cr.get('jobs')).toEqual({ num: 20 });
    expect(calls).toEqual([['/bar', { jobs: { num: 10 }, old: true }, { jobs: { num: 20 } }]]);
    await cr.close();
  });

  it('watch times out with WaitTimeout, and returns null once closed', async () => {
    const zk = await backend().connect();
    await zk.create('/c', json({}));
    const cr = await CachedReader.open(zk, '/c');
    const err = await cr.watch(30).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeout);
    expect(isZoottError(err, 'WAIT_TIMEOUT')).toBe(true);
    const waiting = cr.watch();
    await cr.close();
    expect(await waiting).toBeNull();
    expect(await cr.watch()).toBeNull();
    await zk.set('/c', json({ after: 1 }));
    expect(cr.size).toBe(0); // no longer updated
  });

  it('empties when the node is deleted and fills again when it comes back', async () => {
    const zk = await backend().connect();
    const writer = await backend().connect();
    await writer.create('/d', json({ a: 1 }));
    const cr = await CachedReader.open(zk, '/d');
    let change = cr.watch(60_000);
    await writer.delete('/d');
    expect(await change).toEqual([{ a: 1 }, {}]);
    expect(cr.size).toBe(0);
    change = cr.watch(60_000);
    await writer.create('/d', json({ b: 2 }));
    expect(await change).toEqual([{}, { b: 2 }]);
    expect(cr.get('b')).toBe(2);
    await cr.close();
  });

  it('stops when its session is lost', async () => {
    const zk = await backend().connect();
    await zk.create('/e', json({ a: 1 }));
    const cr = await CachedReader.open(zk, '/e');
    const waiting = cr.watch(60_000);
    await backend().expireSession(zk);
    expect(await waiting).toBeNull();
    expect(cr.closed).toBe(true);
  });

  it('rejects missing and non-object nodes, and closes a connection it opened', async () => {
    const zk = await backend().connect();
    await zk.create('/list', json([1, 2]));
    await expect(CachedReader.open(zk, '/missing')).rejects.toMatchObject({ code: 'NO_NODE' });
    await expect(CachedReader.open(zk, '/list')).rejects.toMatchObject({ code: 'BAD_ARGUMENTS' });
    await zk.create('/f', json({ k: 'v' }));
    const opened: Coordinator[] = [];
    const cr = await CachedReader.open('somewhere:2181', '/f', {
      connect: async () => {
        const c = await backend().connect();
        opened.push(c);
        return c;
      },
    });
    expect(cr.get('k')).toBe('v');
    await cr.close();
    expect(opened[0]?.state).toBe('closed');
  });
});
