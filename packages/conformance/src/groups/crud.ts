import { expect, it } from 'vitest';
import { expectCode, sorted, str, text } from '../context.js';
import type { GroupTests } from '../group.js';

export const crudTests: GroupTests = (ctx) => {
  it('create returns the path; get returns the data and a fresh stat', async () => {
    const { client, path } = ctx();
    const created = await client.create(path('a'), text('hello'));
    expect(created).toBe(path('a'));
    const { data, stat } = await client.get(path('a'));
    expect(str(data)).toBe('hello');
    expect(stat).toMatchObject({ version: 0, dataLength: 5, numChildren: 0, ephemeralOwner: null });
  });

  it('create without data stores empty data', async () => {
    const { client, path } = ctx();
    await client.create(path('empty'));
    const { data, stat } = await client.get(path('empty'));
    expect(data).toBeInstanceOf(Uint8Array);
    expect(data.length).toBe(0);
    expect(stat.dataLength).toBe(0);
  });

  it('binary data round-trips byte for byte', async () => {
    const { client, path } = ctx();
    const bytes = new Uint8Array(512);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + 3) % 256;
    await client.create(path('bin'), bytes);
    const { data } = await client.get(path('bin'));
    expect(Array.from(data)).toEqual(Array.from(bytes));
  });

  it('names may hold spaces, dots and non-ASCII letters', async () => {
    const { client, path } = ctx();
    const names = ['a b', 'v1.2', 'grüße', 'x|y'];
    for (const name of names) await client.create(path(name), text(name));
    expect(sorted(await client.children(ctx().base))).toEqual(sorted(names));
    expect(str((await client.get(path('grüße'))).data)).toBe('grüße');
  });

  it('create under a missing parent fails NO_NODE and creates nothing', async () => {
    const { client, path, base } = ctx();
    const err = await expectCode(client.create(path('missing', 'child')), 'NO_NODE');
    expect(err.path).toBe(path('missing', 'child'));
    expect(await client.children(base)).toEqual([]);
  });

  it('create of an existing path fails NODE_EXISTS and keeps the data', async () => {
    const { client, path } = ctx();
    await client.create(path('dup'), text('first'));
    await expectCode(client.create(path('dup'), text('second')), 'NODE_EXISTS');
    expect(str((await client.get(path('dup'))).data)).toBe('first');
  });

  it('get of a missing node fails NO_NODE naming the path', async () => {
    const { client, path } = ctx();
    const err = await expectCode(client.get(path('nope')), 'NO_NODE');
    expect(err.path).toBe(path('nope'));
  });

  it('set replaces the data and returns the new stat', async () => {
    const { client, path } = ctx();
    await client.create(path('s'), text('one'));
    const stat = await client.set(path('s'), text('three'));
    expect(stat).toMatchObject({ version: 1, dataLength: 5 });
    const got = await client.get(path('s'));
    expect(str(got.data)).toBe('three');
    expect(got.stat).toEqual(stat);
  });

  it('set to empty data empties the node', async () => {
    const { client, path } = ctx();
    await client.create(path('s'), text('something'));
    await client.set(path('s'), new Uint8Array(0));
    const { data, stat } = await client.get(path('s'));
    expect(data.length).toBe(0);
    expect(stat.dataLength).toBe(0);
  });

  it('set of a missing node fails NO_NODE', async () => {
    const { client, path } = ctx();
    await expectCode(client.set(path('nope'), text('x')), 'NO_NODE');
  });

  it('delete removes the node', async () => {
    const { client, path } = ctx();
    await client.create(path('d'));
    await client.delete(path('d'));
    expect(await client.exists(path('d'))).toBeNull();
    await expectCode(client.get(path('d')), 'NO_NODE');
  });

  it('delete of a missing node fails NO_NODE', async () => {
    const { client, path } = ctx();
    await expectCode(client.delete(path('nope')), 'NO_NODE');
  });

  it('delete of a node with children fails NOT_EMPTY and deletes nothing', async () => {
    const { client, path } = ctx();
    await client.create(path('p'));
    await client.create(path('p', 'c'));
    await expectCode(client.delete(path('p')), 'NOT_EMPTY');
    expect(await client.children(path('p'))).toEqual(['c']);
  });

  it('exists gives the stat of a present node and null for an absent one', async () => {
    const { client, path } = ctx();
    await client.create(path('e'), text('abc'));
    const stat = await client.exists(path('e'));
    expect(stat).toMatchObject({ dataLength: 3, version: 0 });
    expect(await client.exists(path('absent'))).toBeNull();
    expect(await client.exists(path('absent', 'deeper'))).toBeNull();
  });

  it('children lists the child names; a leaf has none', async () => {
    const { client, path } = ctx();
    await client.create(path('p'));
    for (const name of ['b', 'a', 'c']) await client.create(path('p', name));
    expect(sorted(await client.children(path('p')))).toEqual(['a', 'b', 'c']);
    expect(await client.children(path('p', 'a'))).toEqual([]);
  });

  it('children of a missing node fails NO_NODE', async () => {
    const { client, path } = ctx();
    await expectCode(client.children(path('nope')), 'NO_NODE');
    await expectCode(client.childrenWithStat(path('nope')), 'NO_NODE');
  });

  it('childrenWithStat returns the names with the parent stat', async () => {
    const { client, path } = ctx();
    await client.create(path('p'), text('pp'));
    await client.create(path('p', 'x'));
    await client.create(path('p', 'y'));
    const { children, stat } = await client.childrenWithStat(path('p'));
    expect(sorted(children)).toEqual(['x', 'y']);
    expect(stat).toMatchObject({ numChildren: 2, cversion: 2, dataLength: 2 });
  });

  it('numChildren follows creates and deletes', async () => {
    const { client, path } = ctx();
    await client.create(path('p'));
    await client.create(path('p', '1'));
    await client.create(path('p', '2'));
    expect((await client.exists(path('p')))?.numChildren).toBe(2);
    await client.delete(path('p', '1'));
    expect((await client.exists(path('p')))?.numChildren).toBe(1);
  });

  it('a deep chain of nodes can be built and listed level by level', async () => {
    const { client, path } = ctx();
    const segments = ['l1', 'l2', 'l3', 'l4', 'l5'];
    for (let i = 1; i <= segments.length; i++) await client.create(path(...segments.slice(0, i)));
    for (let i = 1; i < segments.length; i++) {
      expect(await client.children(path(...segments.slice(0, i)))).toEqual([segments[i]]);
    }
  });

  it('changing the bytes returned by get does not change the node', async () => {
    const { client, path } = ctx();
    await client.create(path('m'), text('keep'));
    const first = await client.get(path('m'));
    first.data.fill(0);
    expect(str((await client.get(path('m'))).data)).toBe('keep');
  });

  it("one client's requests settle in the order they were issued", async () => {
    const { client, path } = ctx();
    const order: string[] = [];
    const track = <T>(label: string, promise: Promise<T>) =>
      promise.then(
        () => order.push(label),
        () => order.push(`${label}!`),
      );
    await Promise.all([
      track('create', client.create(path('f'))),
      track('set', client.set(path('f'), text('1'))),
      track('get', client.get(path('f'))),
      track('delete', client.delete(path('f'))),
      track('get-again', client.get(path('f'))),
    ]);
    expect(order).toEqual(['create', 'set', 'get', 'delete', 'get-again!']);
  });

  it('of concurrent creators of one path exactly one succeeds', async () => {
    const { connect, path } = ctx();
    const clients = await Promise.all([connect(), connect(), connect()]);
    const results = await Promise.allSettled(clients.map((c) => c.create(path('race'))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const settled of results) {
      if (settled.status === 'rejected')
        expect(settled.reason).toMatchObject({ code: 'NODE_EXISTS' });
    }
  });
};
