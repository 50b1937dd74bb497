import { type Coordinator, isZoottError, Perms, ZoottError } from '@zoott/core';
import { candidateOrder, LeaderElection, type Leadership, WaitTimeout } from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { describe, expect, it } from 'vitest';

/** Resolves when `check` holds, re-checking on every macrotask turn (bounded by the test timeout). */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise<void>((r) => setTimeout(r, 10));
}

/** A coordinator that counts the reads that can arm a watch (`exists`, `children`). */
function counting(zk: Coordinator): { c: Coordinator; reads: () => number } {
  let reads = 0;
  const c = new Proxy(zk, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop === 'exists' || prop === 'children' || prop === 'childrenWithStat') {
        return (...args: unknown[]) => {
          reads += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
  return { c, reads: () => reads };
}

describe('candidate order', () => {
  it('is the sequence at the end of the name, not the random tag before it', () => {
    const names = [
      'c-ffffff000000-0000000003',
      'c-000000ffffff-_p0123456789ab_0000000010',
      'c-aaaaaa000000-0000000001',
      'not-a-candidate',
    ];
    expect(candidateOrder(names)).toEqual([
      'c-aaaaaa000000-0000000001',
      'c-ffffff000000-0000000003',
      'c-000000ffffff-_p0123456789ab_0000000010',
    ]);
  });
});

describeOnBackends('LeaderElection', (backend) => {
  it('elects exactly one leader among N, then the others in the order they entered', async () => {
    const n = 6;
    const observer = await backend().connect();
    const elections: LeaderElection[] = [];
    const leads: Array<Promise<Leadership>> = [];
    for (let i = 0; i < n; i++) {
      const e = new LeaderElection(await backend().connect(), '/election/one', {
        identifier: `cand-${i}`,
      });
      elections.push(e);
      leads.push(e.lead());
      // Entered (its node exists) before the next one starts: the entry order is known.
      await eventually(
        async () => (await observer.children('/election/one').catch(() => [])).length === i + 1,
      );
    }
    expect(await elections[0]!.contenders()).toEqual(elections.map((e) => e.identifier));
    const order: string[] = [];
    for (let i = 0; i < n; i++) {
      const winner = await Promise.race(leads.map((p, at) => p.then(() => at)));
      order.push(elections[winner]!.identifier);
      expect(elections.filter((e) => e.isLeader)).toHaveLength(1);
      expect(elections[winner]!.isLeader).toBe(true);
      const held = await leads[winner]!;
      await elections[winner]!.withdraw();
      expect(held.signal.aborted).toBe(true);
      expect(held.lost).toBe('withdrawn');
      leads[winner] = new Promise<Leadership>(() => undefined); // out of the race
    }
    expect(order).toEqual(elections.map((e) => e.identifier));
    expect(await observer.children('/election/one')).toEqual([]);
  });

  it('wakes only the next candidate when the leader goes (no herd)', async () => {
    const n = 5;
    const observer = await backend().connect();
    const clients = await Promise.all(
      Array.from({ length: n }, async () => counting(await backend().connect())),
    );
    const elections = clients.map(({ c }) => new LeaderElection(c, '/election/herd'));
    const leads: Array<Promise<Leadership>> = [];
    for (let i = 0; i < n; i++) {
      const lead = elections[i]!.lead();
      // Handled from the start: the candidates still waiting when the elections close are
      // withdrawn, and their lead() rejects (checked below), which must not go unhandled.
      lead.catch(() => undefined);
      leads.push(lead);
      await eventually(
        async () => (await observer.children('/election/herd').catch(() => [])).length === i + 1,
      );
    }
    await leads[0];
    // Every waiting candidate has armed its watch (its last read) before the leader goes.
    // (each listed the candidates and then looked at its predecessor: two reads)
    await eventually(() => clients.every(({ reads }, i) => i === 0 || reads() >= 2));
    const barrier = async () => {
      for (const { c } of clients.slice(1)) await c.exists('/');
      for (const { c } of clients.slice(1)) await c.exists('/');
    };
    await barrier();
    const before = clients.map(({ reads }) => reads());
    await elections[0]!.withdraw();
    await leads[1];
    await barrier();
    const woke = clients.map(({ reads }, i) => reads() - before[i]! - (i === 0 ? 0 : 2));
    // The successor re-listed the candidates (and armed no new watch: it leads); the others
    // did not read at all.
    expect(woke[1]).toBeGreaterThan(0);
    expect(woke.slice(2)).toEqual(Array.from({ length: n - 2 }, () => 0));
    for (const e of elections) await e.close();
    // Closed in turn, a waiting candidate either led for a moment (its predecessor closed
    // first) or was withdrawn while waiting: nothing else.
    for (const waiting of await Promise.allSettled(leads.slice(2)))
      if (waiting.status === 'rejected') expect(isZoottError(waiting.reason, 'ABORTED')).toBe(true);
  });

  it('fails over when the leader session ends; the old leader is told', async () => {
    const a = await backend().connect();
    const b = await backend().connect();
    const first = new LeaderElection(a, '/election/failover', { identifier: 'a' });
    const second = new LeaderElection(b, '/election/failover', { identifier: 'b' });
    const held = await first.lead();
    const waiting = second.lead();
    await eventually(async () => (await second.contenders()).length === 2);
    expect(second.isLeader).toBe(false);
    await backend().expireSession(a);
    const taken = await waiting;
    expect(second.isLeader).toBe(true);
    expect(held.signal.aborted).toBe(true);
    expect(held.lost).toBe('session');
    expect(isZoottError(held.signal.reason, 'SESSION_EXPIRED')).toBe(true);
    expect(first.isLeader).toBe(false);
    expect(await second.contenders()).toEqual(['b']);
    expect(taken.node.startsWith('/election/failover/c-')).toBe(true);
    await second.close();
  });

  it('a candidate whose create reply was lost adopts its node: no ghost candidate', async () => {
    const zk = await backend().connect();
    let lose = true;
    const flaky = new Proxy(zk, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'create') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<Coordinator['create']>) => {
          const made = await target.create(...args);
          if (lose && args[2]?.sequential) {
            lose = false;
            throw new ZoottError('CONNECTION_LOSS', 'reply lost (simulated)', {
              op: 'create',
              path: args[0],
            });
          }
          return made;
        };
      },
    });
    const other = new LeaderElection(await backend().connect(), '/election/lost', {
      identifier: 'other',
    });
    const mine = new LeaderElection(flaky, '/election/lost', { identifier: 'mine' });
    await mine.lead();
    expect(lose).toBe(false);
    expect(await zk.children('/election/lost')).toHaveLength(1);
    const next = other.lead();
    await eventually(async () => (await zk.children('/election/lost')).length === 2);
    await mine.withdraw();
    await next;
    expect(other.isLeader).toBe(true);
    expect(await other.contenders()).toEqual(['other']);
    await other.close();
  });

  it('ends the leadership when someone else deletes the leader node', async () => {
    const zk = await backend().connect();
    const admin = await backend().connect();
    const election = new LeaderElection(zk, '/election/deleted');
    const held = await election.lead();
    await admin.delete(held.node);
    await eventually(() => held.signal.aborted);
    expect(held.lost).toBe('node');
    expect(election.isLeader).toBe(false);
    // Entering again works and leads (nobody else is there).
    const again = await election.lead();
    expect(again.node).not.toBe(held.node);
    await election.close();
  });

  it('lead() gives up: timeout (the node is removed), abort signal, withdraw', async () => {
    const zk = await backend().connect();
    const leader = new LeaderElection(zk, '/election/wait');
    await leader.lead();
    const waiter = new LeaderElection(await backend().connect(), '/election/wait');
    const timedOut = await waiter.lead({ timeoutMs: 20 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(WaitTimeout);
    expect(await zk.children('/election/wait')).toHaveLength(1);

    const controller = new AbortController();
    const aborted = waiter.lead({ signal: controller.signal }).catch((e: unknown) => e);
    await eventually(async () => (await zk.children('/election/wait')).length === 2);
    controller.abort();
    expect(isZoottError(await aborted, 'ABORTED')).toBe(true);
    expect(await zk.children('/election/wait')).toHaveLength(1);

    const withdrawn = waiter.lead().catch((e: unknown) => e);
    await eventually(async () => (await zk.children('/election/wait')).length === 2);
    await waiter.withdraw();
    expect(isZoottError(await withdrawn, 'ABORTED')).toBe(true);
    expect(await zk.children('/election/wait')).toHaveLength(1);
    await leader.close();
    expect(await zk.children('/election/wait')).toHaveLength(0);
  });

  it('makes its missing path from the bottom: an ancestor that refuses creates is never created again', async () => {
    const zk = await backend().connect();
    await zk.create('/locked');
    await zk.create('/locked/mine');
    // Someone takes /locked over: nobody may create in it any more.
    await zk.setAcl('/locked', [{ scheme: 'world', id: 'anyone', perms: Perms.READ }]);
    const election = new LeaderElection(zk, '/locked/mine/scheduler');
    const held = await election.lead();
    expect(held.node.startsWith('/locked/mine/scheduler/')).toBe(true);
    await election.close();
  });

  it('run() leads, passes the signal and withdraws when the function ends (README example)', async () => {
    const zk = await backend().connect();
    const doLeaderWork = async (signal: AbortSignal) => (signal.aborted ? 'lost' : 'done');
    // As in the README:
    const election = new LeaderElection(zk, '/election/scheduler', { identifier: 'w-1' });
    const leadership = await election.lead();
    await doLeaderWork(leadership.signal); // stop when the signal aborts
    await election.withdraw();

    expect(await election.run(doLeaderWork)).toBe('done');
    expect(election.isLeader).toBe(false);
    expect(await zk.children('/election/scheduler')).toEqual([]);
    expect(() => new LeaderElection(zk, 'relative')).toThrow(/absolute path/);
    await election.close();
  });
});
