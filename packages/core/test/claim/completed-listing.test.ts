import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { holdingListings, oneBucketEngine, oneBucketWorld } from '../engine/helpers.js';

describeOnBackends('claimers of one engine: a listing read before an own completion', (backend) => {
  it('does not bring the completed entry back: the completed task blocks none of its children there', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    const raw = await backend().connect();
    const { coordinator: c, hold, release } = holdingListings(raw);
    const engine = oneBucketEngine(c, world);
    const a = await engine.claimer({ worker: 'a' });
    const b = await engine.claimer({ worker: 'b' });
    a.setWatched([0]);
    b.setWatched([0]);
    // b lists the bucket while it is empty; then p and its child are queued.
    await b.listings.refresh([0], true);
    await other.queue({ name: 'p', type: 't' });
    await other.queue({ name: 'c', type: 't', parent: { key: ['p'] } });
    const p = await a.claim([0]);
    expect(p?.key).toEqual(['p']);
    // b reads the bucket again: the server answers with p's entry, and the reply is held.
    const held = hold();
    const reading = b.listings.refresh([0], true);
    await held;
    // a's completion deletes p's entry; b's listing in flight still shows it.
    expect((await engine.complete(p!, 'done')).status).toBe('completed');
    release();
    await reading;
    const st = b.listings.get(0)!;
    // The read went out before the completion: it is taken as it stands, without p's entry.
    expect(st.entries.map((e) => e.encodedKey)).toEqual(['p|c']);
    expect(st.present.has('p')).toBe(false);
    await Promise.all([raw.close(), other.close()]);
  });

  it('shows a child queued while the task ran: the child is urgent work at once, and the claimer is woken', async () => {
    const { world, other } = await oneBucketWorld(() => backend().connect());
    const raw = await backend().connect();
    const { coordinator: c, hold, release } = holdingListings(raw);
    const engine = oneBucketEngine(c, world);
    let woken = 0;
    const claimer = await engine.claimer({ worker: 'w' }, () => woken++);
    claimer.setWatched([0]);
    await other.queue({ name: 'p', type: 't' });
    const p = await claimer.claim([0]);
    expect(p?.key).toEqual(['p']);
    // The child is queued while p runs: the listing the claimer holds does not show it.
    await other.queue({ name: 'c', type: 't', parent: { key: ['p'] } });
    await raw.exists('/');
    // A listing goes out and is answered with p and its child; the reply is held.
    claimer.touch(0);
    const held = hold();
    const reading = claimer.listings.refresh([0], true);
    await held;
    expect((await engine.complete(p!, 'done')).status).toBe('completed');
    // Nothing of the priority of what runs (0) is known to wait yet: no claim is due.
    expect(claimer.hasUrgent([0], 0)).toBe(false);
    const before = woken;
    release();
    await reading;
    // The listing shows the child, waiting only on the task completed here: a worker with a
    // single free slot claims it now, without waiting for a batch of slots (see hasUrgent).
    expect(claimer.hasUrgent([0], 0)).toBe(true);
    expect(woken).toBeGreaterThan(before);
    expect((await claimer.claim([0]))?.key).toEqual(['p', 'c']);
    await Promise.all([raw.close(), other.close()]);
  });
});
