import { expect, it } from 'vitest';
import { expectCode, recorder, str, text } from '../context.js';
import type { GroupTests } from '../group.js';

export const watchesTests: GroupTests = (ctx) => {
  /** A request issued after a change: every watch that change fired has run once it settles. */
  const roundTrip = () => ctx().client.exists(ctx().base);

  it('a get watch fires dataChanged on set, with the path the client used', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('n'), text('a'));
    const watchRecorder = recorder(timeoutMs);
    await client.get(path('n'), { watch: watchRecorder.watch });
    await client.set(path('n'), text('b'));
    expect(await watchRecorder.next()).toEqual({ type: 'dataChanged', path: path('n') });
  });

  it('a get watch fires deleted when the node is deleted', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('n'));
    const watchRecorder = recorder(timeoutMs);
    await client.get(path('n'), { watch: watchRecorder.watch });
    await client.delete(path('n'));
    expect(await watchRecorder.next()).toEqual({ type: 'deleted', path: path('n') });
  });

  it('an exists watch on an absent node fires created', async () => {
    const { client, path, timeoutMs } = ctx();
    const watchRecorder = recorder(timeoutMs);
    expect(await client.exists(path('later'), { watch: watchRecorder.watch })).toBeNull();
    await client.create(path('later'));
    expect(await watchRecorder.next()).toEqual({ type: 'created', path: path('later') });
  });

  it('an exists watch on a present node fires dataChanged, then (re-armed) deleted', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('n'));
    const first = recorder(timeoutMs);
    await client.exists(path('n'), { watch: first.watch });
    await client.set(path('n'), text('x'));
    expect(await first.next()).toEqual({ type: 'dataChanged', path: path('n') });
    const second = recorder(timeoutMs);
    await client.exists(path('n'), { watch: second.watch });
    await client.delete(path('n'));
    expect(await second.next()).toEqual({ type: 'deleted', path: path('n') });
  });

  it('a children watch fires childrenChanged on a child create, and again (re-armed) on a child delete', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('p'));
    const onCreate = recorder(timeoutMs);
    await client.children(path('p'), { watch: onCreate.watch });
    await client.create(path('p', 'c'));
    expect(await onCreate.next()).toEqual({ type: 'childrenChanged', path: path('p') });
    const onDelete = recorder(timeoutMs);
    await client.childrenWithStat(path('p'), { watch: onDelete.watch });
    await client.delete(path('p', 'c'));
    expect(await onDelete.next()).toEqual({ type: 'childrenChanged', path: path('p') });
  });

  it('a children watch fires deleted when the node itself is deleted', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('p'));
    const watchRecorder = recorder(timeoutMs);
    await client.children(path('p'), { watch: watchRecorder.watch });
    await client.delete(path('p'));
    expect(await watchRecorder.next()).toEqual({ type: 'deleted', path: path('p') });
  });

  it('watches are one-shot: a second change does not fire them again', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('n'));
    await client.create(path('p'));
    const data = recorder(timeoutMs);
    const kids = recorder(timeoutMs);
    await client.get(path('n'), { watch: data.watch });
    await client.children(path('p'), { watch: kids.watch });
    await client.set(path('n'), text('1'));
    await client.set(path('n'), text('2'));
    await client.create(path('p', 'a'));
    await client.create(path('p', 'b'));
    await roundTrip();
    expect(data.events).toHaveLength(1);
    expect(kids.events).toHaveLength(1);
  });

  it('a get or children that fails NO_NODE sets no watch', async () => {
    const { client, path, timeoutMs } = ctx();
    const data = recorder(timeoutMs);
    const kids = recorder(timeoutMs);
    await expectCode(client.get(path('n'), { watch: data.watch }), 'NO_NODE');
    await expectCode(client.children(path('n'), { watch: kids.watch }), 'NO_NODE');
    await client.create(path('n'));
    await client.create(path('n', 'c'));
    await client.set(path('n'), text('x'));
    await roundTrip();
    expect(data.events).toEqual([]);
    expect(kids.events).toEqual([]);
  });

  it('a create fires the node watch (created) before the parent watch (childrenChanged)', async () => {
    const { client, path, timeoutMs } = ctx();
    const log: string[] = [];
    await client.create(path('p'));
    const node = recorder(timeoutMs, log, 'node');
    const parent = recorder(timeoutMs, log, 'parent');
    await client.exists(path('p', 'c'), { watch: node.watch });
    await client.children(path('p'), { watch: parent.watch });
    await client.create(path('p', 'c'));
    await Promise.all([node.next(), parent.next()]);
    expect(log).toEqual([`node:created:${path('p', 'c')}`, `parent:childrenChanged:${path('p')}`]);
  });

  it("a delete fires the node's watches (deleted) before the parent watch (childrenChanged)", async () => {
    const { client, path, timeoutMs } = ctx();
    const log: string[] = [];
    await client.create(path('p'));
    await client.create(path('p', 'c'));
    const data = recorder(timeoutMs, log, 'data');
    const kids = recorder(timeoutMs, log, 'kids');
    const parent = recorder(timeoutMs, log, 'parent');
    await client.get(path('p', 'c'), { watch: data.watch });
    await client.children(path('p', 'c'), { watch: kids.watch });
    await client.children(path('p'), { watch: parent.watch });
    await client.delete(path('p', 'c'));
    await Promise.all([data.next(), kids.next(), parent.next()]);
    expect(log).toHaveLength(3);
    expect(log.slice(0, 2).sort()).toEqual([
      `data:deleted:${path('p', 'c')}`,
      `kids:deleted:${path('p', 'c')}`,
    ]);
    expect(log[2]).toBe(`parent:childrenChanged:${path('p')}`);
  });

  it('a watch fires before the reply to any request issued after the change', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('n'));
    const watchRecorder = recorder(timeoutMs);
    await client.get(path('n'), { watch: watchRecorder.watch });
    const set = client.set(path('n'), text('x'));
    const later = client.exists(path('n')).then(() => watchRecorder.events.length);
    await set;
    expect(await later).toBe(1);
  });

  it("another session's change fires the watch, and the change is visible from inside it", async () => {
    const { client, connect, path, timeoutMs } = ctx();
    await client.create(path('n'), text('old'));
    const writer = await connect();
    let seen: string | undefined;
    const fired = new Promise<void>((resolve, reject) => {
      client
        .get(path('n'), {
          watch: () => {
            client.get(path('n')).then(({ data }) => {
              seen = str(data);
              resolve();
            }, reject);
          },
        })
        .catch(reject);
    });
    // Make sure the watch is set before the other session writes.
    await client.exists(path('n'));
    await writer.set(path('n'), text('new'));
    await Promise.race([
      fired,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('watch never fired')), timeoutMs),
      ),
    ]);
    expect(seen).toBe('new');
  });

  it('every watcher registered on a node fires', async () => {
    const { client, connect, path, timeoutMs } = ctx();
    await client.create(path('n'));
    const other = await connect();
    const recorderA = recorder(timeoutMs);
    const recorderB = recorder(timeoutMs);
    const recorderC = recorder(timeoutMs);
    await client.get(path('n'), { watch: recorderA.watch });
    await client.exists(path('n'), { watch: recorderB.watch });
    await other.get(path('n'), { watch: recorderC.watch });
    await client.set(path('n'), text('x'));
    for (const eachRecorder of [recorderA, recorderB, recorderC])
      expect(await eachRecorder.next()).toEqual({ type: 'dataChanged', path: path('n') });
  });

  it('setAcl fires no data watch', async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('n'));
    const watchRecorder = recorder(timeoutMs);
    await client.get(path('n'), { watch: watchRecorder.watch });
    await client.setAcl(path('n'), [{ scheme: 'world', id: 'anyone', perms: 31 }]);
    await roundTrip();
    expect(watchRecorder.events).toEqual([]);
  });

  it("a child's data change does not fire the parent's children watch; a set does not fire a children watch", async () => {
    const { client, path, timeoutMs } = ctx();
    await client.create(path('p'));
    await client.create(path('p', 'c'));
    const watchRecorder = recorder(timeoutMs);
    await client.children(path('p'), { watch: watchRecorder.watch });
    await client.set(path('p', 'c'), text('x'));
    await client.set(path('p'), text('y'));
    await roundTrip();
    expect(watchRecorder.events).toEqual([]);
  });

  it('an exists watch on an absent node ignores siblings', async () => {
    const { client, path, timeoutMs } = ctx();
    const watchRecorder = recorder(timeoutMs);
    await client.exists(path('wanted'), { watch: watchRecorder.watch });
    await client.create(path('wanted-not'));
    await client.create(path('other'));
    await roundTrip();
    expect(watchRecorder.events).toEqual([]);
  });

  it('the watches of a closed session never fire', async () => {
    const { client, connect, path, timeoutMs } = ctx();
    await client.create(path('n'));
    const other = await connect();
    const mine = recorder(timeoutMs);
    await client.get(path('n'), { watch: mine.watch });
    const theirs = recorder(timeoutMs);
    await other.get(path('n'), { watch: theirs.watch });
    await other.close();
    await client.set(path('n'), text('x'));
    expect(await mine.next()).toEqual({ type: 'dataChanged', path: path('n') });
    await roundTrip();
    expect(theirs.events).toEqual([]);
  });
};
