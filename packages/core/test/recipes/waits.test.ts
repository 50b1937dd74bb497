import { type Coordinator, isZoottError, type NodeData, utf8 } from '@zoott/core';
import { getNext, WaitTimeout, waitAbsent } from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';

/** Wraps a coordinator so a test can wait until a number of `get` calls on it have completed. */
function countingGets(zk: Coordinator): {
  zk: Coordinator;
  gets: () => number;
  until: (n: number) => Promise<void>;
} {
  let done = 0;
  const waiters: Array<() => void> = [];
  const wrapped = Object.create(zk) as Coordinator;
  wrapped.get = async (path, options) => {
    try {
      return await zk.get(path, options);
    } finally {
      done += 1;
      for (const w of waiters.splice(0)) w();
    }
  };
  const until = async (n: number) => {
    while (done < n) await new Promise<void>((r) => waiters.push(r));
  };
  return { zk: wrapped, gets: () => done, until };
}

/** Lets pending promise continuations run (a macrotask turn), so "still waiting" is meaningful. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 20));

describeOnBackends('getNext', (backend) => {
  it('returns at once when the version already passed', async () => {
    const zk = await backend().connect();
    await zk.create('/n', utf8.encode('a'));
    const got = await getNext(zk, '/n');
    expect(utf8.decode(got.data)).toBe('a');
    await zk.set('/n', utf8.encode('b'));
    expect((await getNext(zk, '/n', { version: 0 })).stat.version).toBe(1);
  });

  it('wakes on the next version and not before', async () => {
    const reader = await backend().connect();
    const writer = await backend().connect();
    await writer.create('/n', utf8.encode('v0'));
    await writer.set('/n', utf8.encode('v1'));
    const counted = countingGets(reader);
    let result: NodeData | undefined;
    const pending = getNext(counted.zk, '/n', { version: 1 });
    await counted.until(1); // first look: version 1, not past 1
    await writer.set('/n', utf8.encode('v2'), 1); // version 2 wakes the waiter
    const got = await pending;
    expect(got.stat.version).toBe(2);
    expect(counted.gets()).toBe(2);

    // Not before: a change that keeps the version at or below the target does not return.
    await writer.create('/m', utf8.encode('m0'));
    result = undefined;
    const second = getNext(counted.zk, '/m', { version: 1 }).then((r) => {
      result = r;
      return r;
    });
    await counted.until(3);
    await writer.set('/m', utf8.encode('m1')); // version 1: not past 1
    await counted.until(4); // the watch woke it, it looked again...
    await settle();
    expect(result).toBeUndefined(); // ...and kept waiting
    await writer.set('/m', utf8.encode('m2')); // version 2
    expect(utf8.decode((await second).data)).toBe('m2');
  });

  it('throws WaitTimeout when nothing comes, and NO_NODE for a missing node', async () => {
    const zk = await backend().connect();
    await zk.create('/n', utf8.encode('x'));
    const err = await getNext(zk, '/n', { version: 0, timeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeout);
    expect(isZoottError(err, 'WAIT_TIMEOUT')).toBe(true);
    await expect(getNext(zk, '/n', { version: 5, timeoutMs: -1 })).rejects.toBeInstanceOf(
      WaitTimeout,
    );
    await expect(getNext(zk, '/absent', { timeoutMs: 50 })).rejects.toMatchObject({
      code: 'NO_NODE',
    });
  });

  it('fails with the session error when the session is lost while waiting', async () => {
    const zk = await backend().connect();
    await zk.create('/n', utf8.encode('x'));
    const waiting = getNext(zk, '/n', { version: 0 }).catch((e: unknown) => e);
    await backend().expireSession(zk);
    expect(isZoottError(await waiting, 'SESSION_EXPIRED')).toBe(true);
  });
});

describeOnBackends('waitAbsent', (backend) => {
  it('returns at once for an absent node, whatever the timeout', async () => {
    const zk = await backend().connect();
    for (const timeoutMs of [-1, 0, 100, undefined]) {
      await expect(waitAbsent(zk, '/nothing', { timeoutMs })).resolves.toBeUndefined();
    }
  });

  it('returns once the node is deleted, not when it merely changes', async () => {
    const zk = await backend().connect();
    const other = await backend().connect();
    await other.create('/a');
    const counted = countingGets(zk);
    let done = false;
    const waiting = waitAbsent(counted.zk, '/a').then(() => {
      done = true;
    });
    await counted.until(1);
    await other.set('/a', utf8.encode('changed'));
    await counted.until(2);
    await settle();
    expect(done).toBe(false);
    await other.delete('/a');
    await waiting;
    expect(done).toBe(true);
  });

  it('throws WaitTimeout while the node stays', async () => {
    const zk = await backend().connect();
    await zk.create('/a');
    for (const timeoutMs of [-1, 0, 50]) {
      await expect(waitAbsent(zk, '/a', { timeoutMs })).rejects.toBeInstanceOf(WaitTimeout);
    }
  });
});
