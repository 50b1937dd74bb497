import { digestAcl, Perms } from '@zoott/core';
import { fourLetter } from '@zoott/zk-testkit';
import { describe, expect, it } from 'vitest';
import type { ZkCoordinator } from '../src/index.js';
import { MAX_BATCHED_READS } from '../src/zk-wire/read-batch.js';
import { EMPTY_MULTI_REPLY, fakeServer } from './fake-server.js';
import { bytes, freshNamespace, open, text, zkServer } from './helpers.js';

/**
 * Reads without a watch issued in one turn travel as one multiRead (src/zk-wire/read-batch.ts). What
 * must hold: fewer requests, and answers, errors and order exactly as if each read went alone.
 */

/** Requests the server has received on `zk`'s connection (its `cons` line for the session). */
async function received(zk: ZkCoordinator): Promise<number> {
  const sid = `sid=0x${zk.sessionId!.replace(/^0+/, '')},`;
  const line = (await fourLetter(zkServer(), 'cons')).split('\n').find((l) => l.includes(sid));
  const recved = line?.match(/recved=(\d+)/)?.[1];
  if (recved === undefined) throw new Error(`no cons line for ${sid}`);
  return Number(recved);
}

const N = 2 * MAX_BATCHED_READS + 6;
const names = Array.from({ length: N }, (_, i) => `/n${i}`);

describe('batched reads on a real ZooKeeper', () => {
  it('sends the reads of one turn as multiReads of at most 32, each read answered alone', async () => {
    // A long session: no ping lands between the two counts.
    const zk = await open(await freshNamespace(), { sessionTimeoutMs: 60_000 });
    for (const n of names) await zk.create(n, bytes(n));
    // The first batch asks the server whether it has multiRead; these reads go one by one.
    await Promise.all(names.slice(0, 2).map((n) => zk.get(n)));
    const before = await received(zk);
    const missing = '/gone';
    const reads = await Promise.allSettled([...names, missing].map((n) => zk.get(n)));
    // Three multiReads (32 + 32 + 7) instead of 71 requests.
    expect((await received(zk)) - before).toBe(3);
    for (let i = 0; i < N; i++) {
      const r = reads[i]!;
      expect(r.status).toBe('fulfilled');
      if (r.status === 'fulfilled') {
        expect(text(r.value.data)).toBe(names[i]);
        expect(r.value.stat.version).toBe(0);
      }
    }
    expect(reads[N]).toMatchObject({
      status: 'rejected',
      reason: { code: 'NO_NODE', op: 'get', path: missing },
    });
  });

  it('fails only the read the server refuses (NO_AUTH), not its neighbours', async () => {
    const zk = await open(await freshNamespace());
    await zk.create('/open', bytes('o'));
    await zk.create('/closed', bytes('c'), { acl: [digestAcl('owner', 'secret', Perms.ALL)] });
    await Promise.all([zk.get('/open'), zk.get('/open')]); // the probe
    const [a, b, c] = await Promise.allSettled([
      zk.get('/open'),
      zk.get('/closed'),
      zk.get('/open'),
    ]);
    expect(a).toMatchObject({ status: 'fulfilled' });
    expect(b).toMatchObject({ status: 'rejected', reason: { code: 'NO_AUTH', path: '/closed' } });
    expect(c).toMatchObject({ status: 'fulfilled' });
  });

  it('keeps the issue order: a write issued after a read is not seen by it', async () => {
    const zk = await open(await freshNamespace());
    await zk.create('/x', bytes('old'));
    await Promise.all([zk.get('/x'), zk.get('/x')]); // the probe
    const [before, , after, , gone] = await Promise.allSettled([
      zk.get('/x'),
      zk.set('/x', bytes('new')),
      zk.get('/x'),
      zk.delete('/x'),
      zk.get('/x'),
    ]);
    expect(before.status === 'fulfilled' && text(before.value.data)).toBe('old');
    expect(after.status === 'fulfilled' && text(after.value.data)).toBe('new');
    expect(gone).toMatchObject({ status: 'rejected', reason: { code: 'NO_NODE' } });
  });
});

describe('batched reads on a server without multiRead (before 3.6)', () => {
  it('asks once, then reads one by one; every read still gets its own answer', async () => {
    // Servers before 3.6 refuse multiRead (op 22) with UNIMPLEMENTED; this one answers every
    // getData (op 4) with NO_NODE.
    const old = await fakeServer((op) => (op === 22 ? -6 : op === 4 ? -101 : 0));
    try {
      const zk = await open(old.hostPort, { requestTimeoutMs: 5000 });
      for (let round = 0; round < 3; round++) {
        const reads = await Promise.allSettled(['/a', '/b', '/c'].map((p) => zk.get(p)));
        for (const r of reads) expect(r).toMatchObject({ reason: { code: 'NO_NODE' } });
      }
      expect(old.seen.get(22)).toBe(1);
      expect(old.seen.get(4)).toBe(9);
    } finally {
      await old.close();
    }
  });
});

describe('batched reads when the server stops answering multiRead', () => {
  it('reads a refused batch again one by one, and reads alone from then on', async () => {
    // The probe is answered (a 3.6+ server), the next multiRead refused: the connection has
    // moved to an older server of an ensemble mid-upgrade.
    let multiReads = 0;
    const fake = await fakeServer((op) => {
      if (op !== 22) return op === 4 ? -101 : 0;
      return multiReads++ === 0 ? { err: 0, body: EMPTY_MULTI_REPLY } : -6;
    });
    try {
      const zk = await open(fake.hostPort, { requestTimeoutMs: 5000 });
      for (let round = 0; round < 3; round++) {
        const reads = await Promise.allSettled(['/a', '/b', '/c'].map((p) => zk.get(p)));
        for (const r of reads) expect(r).toMatchObject({ reason: { code: 'NO_NODE' } });
      }
      // The probe, then the refused batch; its reads and the third round's went alone.
      expect(fake.seen.get(22)).toBe(2);
      expect(fake.seen.get(4)).toBe(9);
    } finally {
      await fake.close();
    }
  });
});
