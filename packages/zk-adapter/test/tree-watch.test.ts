import type { TreeEvent, WatchEvent } from '@zoott/core';
import { startProxy } from '@zoott/zk-testkit';
import { describe, expect, it } from 'vitest';
import { killSession, type ZkCoordinator } from '../src/index.js';
import type { LibClient } from '../src/zk-wire/client-lib.js';
import { sendRemoveWatch } from '../src/zk-wire/tree-watches.js';
import { fakeServer } from './fake-server.js';
import { bytes, freshNamespace, nextSessionEvent, open, zkServer } from './helpers.js';

/**
 * Coordinator.watchTree on a real ZooKeeper 3.8 (addWatch, PERSISTENT_RECURSIVE): what the
 * contract's doc comment asks of it, through the adapter's own connection handling.
 */

/** Records a tree watch's events; `until` resolves once one matching `pred` has come. */
function recorder() {
  const events: TreeEvent[] = [];
  const waiters: Array<{ pred: (e: TreeEvent) => boolean; resolve: () => void }> = [];
  const listener = (e: TreeEvent) => {
    events.push(e);
    for (const w of [...waiters]) {
      if (!w.pred(e)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const until = (pred: (e: TreeEvent) => boolean) =>
    new Promise<void>((resolve) => {
      if (events.some(pred)) resolve();
      else waiters.push({ pred, resolve });
    });
  return { events, listener, until };
}

const isReset = (e: TreeEvent) => e.type === 'reset';

/** The library client under a coordinator: for the raw removeWatches probe. */
function libClient(zk: ZkCoordinator): LibClient {
  const client = (zk as unknown as { session: { client: LibClient | null } }).session.client;
  if (!client) throw new Error('no live client');
  return client;
}

/** The server's answer to removeWatches(path, PersistentRecursive) on `zk`'s connection: 0 or the error code. */
function removeWatchAnswer(zk: ZkCoordinator, path: string): Promise<number> {
  return new Promise((resolve) => {
    sendRemoveWatch(libClient(zk), path, (err: unknown) =>
      resolve(err ? (err as { code: number }).code : 0),
    );
  });
}

const NO_WATCHER = -121;
const MARSHALLING_ERROR = -5;

describe('watchTree on a real ZooKeeper', () => {
  it('reports creates, data changes and deletes at every depth in commit order, multis included', async () => {
    const ns = await freshNamespace();
    const zk = await open(ns);
    const other = await open(ns);
    const rec = recorder();
    // The watched node need not exist yet.
    await zk.watchTree('/t', rec.listener);
    await other.create('/t');
    await other.create('/t/a', bytes('1'));
    await other.set('/t/a', bytes('2'));
    // Outside the tree: a sibling whose name starts with the watched one, and its child.
    await other.create('/tx');
    await other.create('/tx/y');
    await other.multi([
      { op: 'create', path: '/t/a/b' },
      { op: 'create', path: '/t/a/b/c', data: bytes('deep') },
      { op: 'set', path: '/t', data: bytes('top') },
    ]);
    await other.delete('/t/a/b/c');
    await other.multi([
      { op: 'delete', path: '/t/a/b' },
      { op: 'set', path: '/tx', data: bytes('x') },
    ]);
    // Every change above committed before this read: its events came before its reply.
    await zk.exists('/t');
    expect(rec.events).toEqual([
      { type: 'created', path: '/t' },
      { type: 'created', path: '/t/a' },
      { type: 'dataChanged', path: '/t/a' },
      { type: 'created', path: '/t/a/b' },
      { type: 'created', path: '/t/a/b/c' },
      { type: 'dataChanged', path: '/t' },
      { type: 'deleted', path: '/t/a/b/c' },
      { type: 'deleted', path: '/t/a/b' },
    ]);
  });

  it('gives each tree watch of a connection only the events of its own tree', async () => {
    // The server sends a connection one notification per change, for all its watches: the
    // client picks the listeners by path (here /t must not get /tx, a sibling with its name
    // as a prefix, nor the one-shot watch's /elsewhere).
    const ns = await freshNamespace();
    const zk = await open(ns);
    const other = await open(ns);
    const t = recorder();
    const tx = recorder();
    const all = recorder();
    await zk.watchTree('/t', t.listener);
    await zk.watchTree('/tx', tx.listener);
    await other.create('/elsewhere');
    const oneShot: WatchEvent[] = [];
    await zk.get('/elsewhere', { watch: (e) => oneShot.push(e) });
    await other.create('/t');
    await other.create('/tx');
    await other.create('/tx/y');
    await other.create('/t/y');
    await other.set('/elsewhere', bytes('1'));
    await zk.exists('/t');
    await zk.watchTree('/', all.listener);
    await other.delete('/tx/y');
    await zk.exists('/t');
    expect(t.events).toEqual([
      { type: 'created', path: '/t' },
      { type: 'created', path: '/t/y' },
    ]);
    expect(tx.events).toEqual([
      { type: 'created', path: '/tx' },
      { type: 'created', path: '/tx/y' },
      { type: 'deleted', path: '/tx/y' },
    ]);
    expect(oneShot).toEqual([{ type: 'dataChanged', path: '/elsewhere' }]);
    expect(all.events).toEqual([{ type: 'deleted', path: '/tx/y' }]);
  });

  it('runs the event of its own change before that request settles', async () => {
    const zk = await open(await freshNamespace());
    const rec = recorder();
    await zk.watchTree('/', rec.listener);
    const seenAtReply: number[] = [];
    await zk.create('/own').then(() => seenAtReply.push(rec.events.length));
    await zk.set('/own', bytes('v')).then(() => seenAtReply.push(rec.events.length));
    expect(seenAtReply).toEqual([1, 2]);
    expect(rec.events).toEqual([
      { type: 'created', path: '/own' },
      { type: 'dataChanged', path: '/own' },
    ]);
  });

  it('watches the whole chroot at / with client paths, and nothing outside it', async () => {
    const ns = await freshNamespace();
    const chroot = ns.slice(ns.indexOf('/'));
    const zk = await open(ns);
    const root = await open(zkServer());
    const rec = recorder();
    await zk.watchTree('/', rec.listener);
    await root.create(`${chroot}/in`);
    await root.create(`${chroot}-outside`);
    await root.set(chroot, bytes('x'));
    await root.delete(`${chroot}/in`);
    await root.delete(`${chroot}-outside`);
    await zk.exists('/');
    expect(rec.events).toEqual([
      { type: 'created', path: '/in' },
      { type: 'dataChanged', path: '/' },
      { type: 'deleted', path: '/in' },
    ]);
  });

  it('keeps one-shot watches on the same nodes firing, each once per change', async () => {
    const ns = await freshNamespace();
    const zk = await open(ns);
    const other = await open(ns);
    await zk.create('/w');
    await zk.create('/w/n', bytes('1'));
    const rec = recorder();
    await zk.watchTree('/w', rec.listener);
    const oneShot: WatchEvent[] = [];
    await zk.get('/w/n', { watch: (e) => oneShot.push(e) });
    const childWatch: WatchEvent[] = [];
    await zk.children('/w', { watch: (e) => childWatch.push(e) });
    await other.set('/w/n', bytes('2'));
    await other.set('/w/n', bytes('3'));
    await other.create('/w/m');
    await zk.exists('/w');
    expect(oneShot).toEqual([{ type: 'dataChanged', path: '/w/n' }]);
    expect(childWatch).toEqual([{ type: 'childrenChanged', path: '/w' }]);
    expect(rec.events).toEqual([
      { type: 'dataChanged', path: '/w/n' },
      { type: 'dataChanged', path: '/w/n' },
      { type: 'created', path: '/w/m' },
    ]);
  });

  it('fires a children watch on the chroot set before a tree watch there, with client paths', async () => {
    const ns = await freshNamespace();
    const chroot = ns.slice(ns.indexOf('/'));
    const zk = await open(ns);
    const root = await open(zkServer());
    const kids: WatchEvent[] = [];
    await zk.children('/', { watch: (e) => kids.push(e) });
    const rec = recorder();
    await zk.watchTree('/', rec.listener);
    await root.create(`${chroot}-outside`);
    await root.create(`${chroot}/in`);
    await zk.exists('/');
    expect(kids).toEqual([{ type: 'childrenChanged', path: '/' }]);
    expect(rec.events).toEqual([{ type: 'created', path: '/in' }]);
  });

  it('sends one typed removal to a server that cannot read it, however many watches stop at once', async () => {
    const ns = await freshNamespace();
    const probe = await open(ns);
    await probe.exists('/');
    // What this server answers to the typed removal (3.9+ reads it, 3.6 to 3.8 do not).
    const legacy = (await removeWatchAnswer(probe, '/none')) === MARSHALLING_ERROR;
    const zk = await open(ns);
    const stops: (() => void)[] = [];
    for (let i = 0; i < 6; i++) stops.push(await zk.watchTree(`/p${i}`, () => {}));
    const cm = libClient(zk).connectionManager as unknown as {
      queue(request: { header?: { type?: number } }, done: unknown): void;
    };
    const queue = cm.queue.bind(cm);
    let removals = 0;
    cm.queue = (request, done) => {
      if (request?.header?.type === 18) removals++;
      queue(request, done);
    };
    for (const stop of stops) stop();
    // A read sent after the stops is answered after the first removal: every removal that
    // waited for that answer has been sent (or dropped) by then.
    await zk.exists('/');
    await zk.exists('/');
    // Each refused removal is an ERROR with a stack trace in a 3.8 server's log.
    expect(removals).toBe(legacy ? 1 : 6);
  });

  it('stops at once when stopped, even for events already sent, and a second stop is a no-op', async () => {
    const ns = await freshNamespace();
    const zk = await open(ns);
    const other = await open(ns);
    const events: TreeEvent[] = [];
    const stopper: { stop?: () => void } = {};
    // Stopped inside its first event: the second of the multi's events is already on its way.
    const stop = await zk.watchTree('/s', (e) => {
      events.push(e);
      stopper.stop?.();
    });
    stopper.stop = stop;
    const kept = recorder();
    const stopKept = await zk.watchTree('/s', kept.listener);
    await other.multi([
      { op: 'create', path: '/s' },
      { op: 'create', path: '/s/a' },
    ]);
    await zk.exists('/s');
    expect(events).toEqual([{ type: 'created', path: '/s' }]);
    stop();
    // The other watch on the same path still has the server's watch.
    await other.create('/s/b');
    await zk.exists('/s');
    expect(kept.events.map((e) => e.type === 'reset' || e.path)).toEqual(['/s', '/s/a', '/s/b']);
    expect(events).toHaveLength(1);

    stopKept();
    stopKept();
    await other.create('/s/c');
    await zk.exists('/s');
    expect(kept.events).toHaveLength(3);
  });

  it('keeps the tree complete when a one-shot watch is set on its very root, and fires that once', async () => {
    // Before 3.9 the server keeps one watch mode per path and connection: a one-shot watch
    // sent for the root would turn the recursive watch into a one-shot one.
    const ns = await freshNamespace();
    const zk = await open(ns);
    const other = await open(ns);
    await other.create('/w');
    const rec = recorder();
    await zk.watchTree('/w', rec.listener);
    const onData: WatchEvent[] = [];
    await zk.get('/w', { watch: (e) => onData.push(e) });
    const onExists: WatchEvent[] = [];
    await zk.exists('/w/a', { watch: (e) => onExists.push(e) });
    await other.set('/w', bytes('1'));
    await other.create('/w/a');
    await other.set('/w', bytes('2'));
    await other.delete('/w/a');
    await zk.exists('/w');
    expect(onData).toEqual([{ type: 'dataChanged', path: '/w' }]);
    expect(onExists).toEqual([{ type: 'created', path: '/w/a' }]);
    expect(rec.events).toEqual([
      { type: 'dataChanged', path: '/w' },
      { type: 'created', path: '/w/a' },
      { type: 'dataChanged', path: '/w' },
      { type: 'deleted', path: '/w/a' },
    ]);
  });

  it('keeps the tree complete when that one-shot watch is set while the tree watch is being added', async () => {
    const ns = await freshNamespace();
    const zk = await open(ns);
    const other = await open(ns);
    await other.create('/w');
    const rec = recorder();
    const onData: WatchEvent[] = [];
    // Issued together: the addWatch is queued first, the read right behind it.
    const [stop] = await Promise.all([
      zk.watchTree('/w', rec.listener),
      zk.get('/w', { watch: (e) => onData.push(e) }),
    ]);
    await other.set('/w', bytes('1'));
    await other.create('/w/a');
    await zk.exists('/w');
    expect(onData).toEqual([{ type: 'dataChanged', path: '/w' }]);
    expect(rec.events).toEqual([
      { type: 'dataChanged', path: '/w' },
      { type: 'created', path: '/w/a' },
    ]);
    stop();
  });

  it('still fires a one-shot watch on the root that relied on a tree watch stopped since', async () => {
    const ns = await freshNamespace();
    const zk = await open(ns);
    const other = await open(ns);
    const stop = await zk.watchTree('/g', () => {});
    const fired = new Promise<WatchEvent>((resolve) => {
      void zk.exists('/g', { watch: resolve });
    });
    await zk.exists('/g');
    stop();
    await other.create('/g');
    expect(await fired).toEqual({ type: 'created', path: '/g' });
  });

  it('rejects a bad path or listener, registering nothing', async () => {
    const zk = await open(await freshNamespace());
    await expect(zk.watchTree('relative', () => {})).rejects.toMatchObject({
      code: 'INVALID_PATH',
      op: 'watchTree',
    });
    await expect(
      zk.watchTree('/x', 'not a function' as unknown as () => void),
    ).rejects.toMatchObject({ code: 'BAD_ARGUMENTS', op: 'watchTree' });
    // Nothing was sent: the server has no recursive watch there to remove (3.9+ says
    // NOWATCHER; 3.6 to 3.8 cannot read the typed removal at all, MARSHALLING_ERROR).
    expect([NO_WATCHER, MARSHALLING_ERROR]).toContain(await removeWatchAnswer(zk, '/x'));
  });
});

describe('watchTree across connections and sessions', () => {
  it('is added again after a dropped connection, gives reset, and is complete after it', async () => {
    const ns = await freshNamespace();
    const chroot = ns.slice(ns.indexOf('/'));
    const proxy = await startProxy(zkServer());
    try {
      const zk = await open(`${proxy.hostPort}${chroot}`);
      const other = await open(ns);
      const rec = recorder();
      await zk.watchTree('/r', rec.listener);
      await other.create('/r');
      await zk.exists('/r');
      const id = zk.sessionId;
      const reset = rec.until(isReset);
      proxy.dropConnections();
      await nextSessionEvent(zk, 'reconnected');
      await reset;
      expect(zk.sessionId).toBe(id);
      const afterReset = rec.events.length;
      await other.create('/r/a');
      await other.set('/r/a', bytes('1'));
      await other.delete('/r/a');
      await zk.exists('/r');
      expect(rec.events.slice(0, 1)).toEqual([{ type: 'created', path: '/r' }]);
      expect(rec.events.filter(isReset)).toHaveLength(1);
      expect(rec.events.slice(afterReset)).toEqual([
        { type: 'created', path: '/r/a' },
        { type: 'dataChanged', path: '/r/a' },
        { type: 'deleted', path: '/r/a' },
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('keeps a children watch firing that the library set again before the tree watch', async () => {
    const ns = await freshNamespace();
    const chroot = ns.slice(ns.indexOf('/'));
    const proxy = await startProxy(zkServer());
    try {
      const zk = await open(`${proxy.hostPort}${chroot}`);
      const other = await open(ns);
      await other.create('/k');
      const rec = recorder();
      await zk.watchTree('/k', rec.listener);
      // Set after the tree watch: the server keeps it. On the new connection the library sends
      // it again (setWatches) before the tree watch is added: then the server keeps neither.
      const kids: WatchEvent[] = [];
      await zk.children('/k', { watch: (e) => kids.push(e) });
      const reset = rec.until(isReset);
      proxy.dropConnections();
      await nextSessionEvent(zk, 'reconnected');
      await reset;
      await other.create('/k/a');
      await zk.exists('/k');
      expect(kids).toEqual([{ type: 'childrenChanged', path: '/k' }]);
    } finally {
      await proxy.close();
    }
  });

  it('is added again in a renewed session, gives reset, and is complete after it', async () => {
    const ns = await freshNamespace();
    const zk = await open(ns, { sessionTimeoutMs: 4000 });
    const other = await open(ns);
    const rec = recorder();
    await zk.watchTree('/e', rec.listener);
    await killSession(zk);
    expect(zk.state).toBe('lost');
    // killSession may let the client win its session back for a moment first (a reset of
    // its own); what counts is the reset that follows the renewal.
    const before = rec.events.length;
    const renewed = new Promise<void>((resolve) => {
      const off = zk.onSession((e) => {
        if (e.type === 'connected') {
          off();
          resolve();
        }
      });
    });
    await zk.renewSession();
    await renewed;
    await rec.until((e) => e.type === 'reset' && rec.events.indexOf(e) >= before);
    const afterReset = rec.events.length;
    expect(rec.events.slice(before)).toEqual([{ type: 'reset' }]);
    await other.create('/e');
    await other.create('/e/f');
    await zk.exists('/e');
    expect(rec.events.slice(afterReset)).toEqual([
      { type: 'created', path: '/e' },
      { type: 'created', path: '/e/f' },
    ]);
  });
});

describe('watchTree on a server without addWatch', () => {
  it('rejects with UNIMPLEMENTED and leaves nothing to add again on the next connection', async () => {
    // ZooKeeper before 3.6: addWatch (106) is refused; exists (3) answers NO_NODE.
    const old = await fakeServer((op) => (op === 106 ? -6 : op === 3 ? -101 : 0));
    try {
      const zk = await open(old.hostPort, { requestTimeoutMs: 5000 });
      await expect(zk.watchTree('/t', () => {})).rejects.toMatchObject({
        code: 'UNIMPLEMENTED',
        op: 'watchTree',
        path: '/t',
      });
      const back = nextSessionEvent(zk, 'reconnected');
      old.dropConnections();
      await back;
      expect(await zk.exists('/t')).toBeNull();
      expect(old.seen.get(106)).toBe(1);
    } finally {
      await old.close();
    }
  });
});

describe('watchTree stop on servers that can and cannot remove a recursive watch', () => {
  it('tells a 3.9+ server to drop the watch once, unless a one-shot watch on the root relies on it', async () => {
    // addWatch (106) and removeWatches (18) succeed; exists (3) answers NO_NODE.
    const fake = await fakeServer((op) => (op === 3 ? -101 : 0));
    try {
      const zk = await open(fake.hostPort, { requestTimeoutMs: 5000 });
      const stop = await zk.watchTree('/a', () => {});
      stop();
      stop();
      await zk.exists('/a');
      expect(fake.seen.get(18)).toBe(1);
      // This one-shot watch was set while the tree watch covered its node, so the server
      // holds only the recursive watch for it: removing that would silence the one-shot one.
      const stopB = await zk.watchTree('/b', () => {});
      await zk.exists('/b', { watch: () => {} });
      stopB();
      await zk.exists('/b');
      expect(fake.seen.get(18)).toBe(1);
    } finally {
      await fake.close();
    }
  });

  it('stops asking a server that cannot read the typed removal (3.6 to 3.8)', async () => {
    const fake = await fakeServer((op) => (op === 3 ? -101 : op === 18 ? MARSHALLING_ERROR : 0));
    try {
      const zk = await open(fake.hostPort, { requestTimeoutMs: 5000 });
      (await zk.watchTree('/a', () => {}))();
      await zk.exists('/a');
      (await zk.watchTree('/b', () => {}))();
      await zk.exists('/b');
      expect(fake.seen.get(18)).toBe(1);
      expect(fake.seen.get(106)).toBe(2);
    } finally {
      await fake.close();
    }
  });
});
