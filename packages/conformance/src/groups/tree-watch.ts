import type { Coordinator, TreeEvent } from '@zoott/core';
import { expect, it } from 'vitest';
import { eventLog, expectCode, recorder, sessionRecorder, text } from '../context.js';
import type { GroupTests } from '../group.js';

/** A tree listener that records what it hears and lets a test wait for the n-th event. */
function treeRecorder(timeoutMs: number) {
  const log = eventLog<TreeEvent>(timeoutMs, 'tree event');
  return { events: log.events, listener: (e: TreeEvent) => log.push(e), next: log.next };
}

/** `client.watchTree`, which the group requires (a harness without it skips the group). */
function watchTree(client: Coordinator): NonNullable<Coordinator['watchTree']> {
  const fn = client.watchTree;
  if (fn === undefined) throw new Error('conformance: this coordinator has no watchTree');
  return fn.bind(client);
}

export const treeWatchTests: GroupTests = (ctx, declared) => {
  eventTests(ctx, declared);
  oneShotTests(ctx, declared);
  lifecycleTests(ctx, declared);
};

/** What a tree watch reports, and in which order. */
const eventTests: GroupTests = (ctx) => {
  /** A request issued after a change: every event of that change has run once it settles. */
  const roundTrip = () => ctx().client.exists(ctx().base);

  it('reports creates, sets and deletes at every depth, in commit order, and no children changes', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('w'));
    const recording = treeRecorder(timeoutMs);
    await watchTree(client)(path('w'), recording.listener);
    await client.create(path('w', 'a'));
    await client.create(path('w', 'a', 'b'), text('1'));
    await client.set(path('w', 'a', 'b'), text('2'));
    await client.set(path('w'), text('root'));
    await client.delete(path('w', 'a', 'b'));
    await roundTrip();
    expect(recording.events).toEqual([
      { type: 'created', path: path('w', 'a') },
      { type: 'created', path: path('w', 'a', 'b') },
      { type: 'dataChanged', path: path('w', 'a', 'b') },
      { type: 'dataChanged', path: path('w') },
      { type: 'deleted', path: path('w', 'a', 'b') },
    ]);
  });

  it('reports every op of a multi, in op order, before the multi settles', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('w'));
    await client.create(path('w', 'old'));
    const recording = treeRecorder(timeoutMs);
    await watchTree(client)(path('w'), recording.listener);
    await client.multi([
      { op: 'create', path: path('w', 'x'), data: text('x') },
      { op: 'set', path: path('w', 'x'), data: text('y') },
      { op: 'delete', path: path('w', 'old') },
      { op: 'check', path: path('w'), version: 0 },
    ]);
    expect(recording.events).toEqual([
      { type: 'created', path: path('w', 'x') },
      { type: 'dataChanged', path: path('w', 'x') },
      { type: 'deleted', path: path('w', 'old') },
    ]);
  });

  it("reports other sessions' changes, before a later reply to the watching client", async () => {
    const { client, connect, path, timeoutMs } = ctx();
    await client.create(path('w'));
    const other = await connect();
    const recording = treeRecorder(timeoutMs);
    await watchTree(client)(path('w'), recording.listener);
    const created = await other.create(path('w', 'n-'), text('seq'), { sequential: true });
    // The change is committed: a request the watcher's client issues now settles after it.
    await roundTrip();
    expect(recording.events).toEqual([{ type: 'created', path: created }]);
  });

  it('watches a path that does not exist yet, and nothing beside it', async () => {
    const { client, path, timeoutMs } = ctx();
    const recording = treeRecorder(timeoutMs);
    await watchTree(client)(path('later'), recording.listener);
    // A sibling whose name starts like the watched one is not under it.
    await client.create(path('laterish'));
    await client.create(path('later'));
    await client.create(path('later', 'c'));
    await client.delete(path('later', 'c'));
    await client.delete(path('later'));
    await roundTrip();
    expect(recording.events).toEqual([
      { type: 'created', path: path('later') },
      { type: 'created', path: path('later', 'c') },
      { type: 'deleted', path: path('later', 'c') },
      { type: 'deleted', path: path('later') },
    ]);
  });

  it('two tree watches of one client on nested paths both hear a change under both', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('w'));
    await client.create(path('w', 'in'));
    const outer = treeRecorder(timeoutMs);
    const inner = treeRecorder(timeoutMs);
    await watchTree(client)(path('w'), outer.listener);
    await watchTree(client)(path('w', 'in'), inner.listener);
    await client.create(path('w', 'in', 'x'));
    await client.create(path('w', 'out'));
    await roundTrip();
    expect(outer.events).toEqual([
      { type: 'created', path: path('w', 'in', 'x') },
      { type: 'created', path: path('w', 'out') },
    ]);
    expect(inner.events).toEqual([{ type: 'created', path: path('w', 'in', 'x') }]);
  });
};

/** One-shot watches on the nodes a tree watch covers: they fire as if it were not there. */
const oneShotTests: GroupTests = (ctx) => {
  const roundTrip = () => ctx().client.exists(ctx().base);

  it('keeps firing (persistent), and one-shot watches on the same nodes fire once each as before', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('w'));
    await client.create(path('w', 'n'));
    const recording = treeRecorder(timeoutMs);
    await watchTree(client)(path('w'), recording.listener);
    const once = recorder(timeoutMs);
    const kids = recorder(timeoutMs);
    await client.get(path('w', 'n'), { watch: once.watch });
    await client.children(path('w'), { watch: kids.watch });
    await client.set(path('w', 'n'), text('1'));
    await client.set(path('w', 'n'), text('2'));
    await client.create(path('w', 'm'));
    await roundTrip();
    expect(once.events).toEqual([{ type: 'dataChanged', path: path('w', 'n') }]);
    expect(kids.events).toEqual([{ type: 'childrenChanged', path: path('w') }]);
    expect(recording.events).toEqual([
      { type: 'dataChanged', path: path('w', 'n') },
      { type: 'dataChanged', path: path('w', 'n') },
      { type: 'created', path: path('w', 'm') },
    ]);
  });

  // ZooKeeper before 3.9 keeps one watch mode per path and connection: a children watch set
  // before a tree watch on the same node is turned into the tree watch there and never fires.
  it('one-shot watches set before a tree watch on the same node fire as before', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('w'));
    const kids = recorder(timeoutMs);
    const data = recorder(timeoutMs);
    await client.children(path('w'), { watch: kids.watch });
    await client.get(path('w'), { watch: data.watch });
    const recording = treeRecorder(timeoutMs);
    await watchTree(client)(path('w'), recording.listener);
    await client.create(path('w', 'a'));
    await client.set(path('w'), text('1'));
    await roundTrip();
    expect(kids.events).toEqual([{ type: 'childrenChanged', path: path('w') }]);
    expect(data.events).toEqual([{ type: 'dataChanged', path: path('w') }]);
    expect(recording.events).toEqual([
      { type: 'created', path: path('w', 'a') },
      { type: 'dataChanged', path: path('w') },
    ]);
  });

  it('a children watch set before a tree watch fires after that tree watch stops', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('w'));
    await client.create(path('w', 'old'));
    const kids = recorder(timeoutMs);
    await client.children(path('w'), { watch: kids.watch });
    const recording = treeRecorder(timeoutMs);
    const stop = await watchTree(client)(path('w'), recording.listener);
    stop();
    await roundTrip();
    await client.delete(path('w', 'old'));
    await roundTrip();
    expect(kids.events).toEqual([{ type: 'childrenChanged', path: path('w') }]);
    expect(recording.events).toEqual([]);
  });

  it('a children watch fires once when a tree watch on an ancestor reports the same change', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('w'));
    await client.create(path('w', 'in'));
    const recording = treeRecorder(timeoutMs);
    await watchTree(client)(path('w'), recording.listener);
    const kids = recorder(timeoutMs);
    await client.children(path('w', 'in'), { watch: kids.watch });
    await client.create(path('w', 'in', 'x'));
    await roundTrip();
    // A watch set again after the first event hears the next change only.
    await client.children(path('w', 'in'), { watch: kids.watch });
    await roundTrip();
    await client.delete(path('w', 'in', 'x'));
    await roundTrip();
    expect(kids.events).toEqual([
      { type: 'childrenChanged', path: path('w', 'in') },
      { type: 'childrenChanged', path: path('w', 'in') },
    ]);
  });
};

/** How a tree watch ends, fails, and lives through new connections and sessions. */
const lifecycleTests: GroupTests = (ctx, declared) => {
  const roundTrip = () => ctx().client.exists(ctx().base);

  it('the stop function ends delivery at once, and a second call does nothing', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('w'));
    const recording = treeRecorder(timeoutMs);
    const kept = treeRecorder(timeoutMs);
    const stop = await watchTree(client)(path('w'), recording.listener);
    await watchTree(client)(path('w'), kept.listener);
    await client.create(path('w', 'a'));
    await roundTrip();
    stop();
    stop();
    await client.create(path('w', 'b'));
    await roundTrip();
    expect(recording.events).toEqual([{ type: 'created', path: path('w', 'a') }]);
    // Another watch on the same path is not stopped with it.
    expect(kept.events).toEqual([
      { type: 'created', path: path('w', 'a') },
      { type: 'created', path: path('w', 'b') },
    ]);
  });

  it('refuses a bad path with INVALID_PATH, registering nothing', async () => {
    const { client, timeoutMs } = ctx();
    const recording = treeRecorder(timeoutMs);
    await expectCode(watchTree(client)('no-slash', recording.listener), 'INVALID_PATH');
    await expectCode(watchTree(client)('/trailing/', recording.listener), 'INVALID_PATH');
    expect(recording.events).toEqual([]);
  });

  it("a new session gives 'reset', and the changes after it are reported", async () => {
    const { client, connect, harness, path, timeoutMs } = ctx();
    await client.create(path('w'));
    const victim = await connect();
    const recording = treeRecorder(timeoutMs);
    await watchTree(victim)(path('w'), recording.listener);
    const events = sessionRecorder(victim, timeoutMs);
    await harness.expireSession(victim);
    await events.waitFor('lost');
    // Expiring may have cost the client a connection first (a reset then): count from here.
    const before = recording.events.length;
    // The session is gone on the server: its watch with it, so a change now reaches nobody.
    await client.create(path('w', 'gap'));
    await victim.renewSession();
    expect(await recording.next(before + 1)).toEqual({ type: 'reset' });
    await client.create(path('w', 'after'));
    await victim.exists(path('w'));
    expect(recording.events.slice(before)).toEqual([
      { type: 'reset' },
      { type: 'created', path: path('w', 'after') },
    ]);
  });

  if (declared.dropConnection) {
    it("a dropped connection gives 'reset', and the changes after it are reported", async () => {
      const { client, connect, harness, path, timeoutMs } = ctx();
      await client.create(path('w'));
      const coordinator = await connect();
      const recording = treeRecorder(timeoutMs);
      await watchTree(coordinator)(path('w'), recording.listener);
      await harness.dropConnection?.(coordinator);
      const reset = await recording.next();
      expect(reset).toEqual({ type: 'reset' });
      await client.create(path('w', 'after'));
      await coordinator.exists(path('w'));
      expect(recording.events).toEqual([
        { type: 'reset' },
        { type: 'created', path: path('w', 'after') },
      ]);
    });
  }
};
