import { expect, it } from 'vitest';
import { expectCode, str, text } from '../context.js';
import type { GroupTests } from '../group.js';

export const versionsTests: GroupTests = (ctx) => {
  it('a fresh node has version, cversion and aversion 0', async () => {
    const { client, path } = ctx();
    await client.create(path('n'));
    const stat = await client.exists(path('n'));
    expect(stat).toMatchObject({ version: 0, cversion: 0, aversion: 0 });
  });

  it('every set adds one to version, even with the same data', async () => {
    const { client, path } = ctx();
    await client.create(path('n'), text('x'));
    expect((await client.set(path('n'), text('x'))).version).toBe(1);
    expect((await client.set(path('n'), text('x'))).version).toBe(2);
    expect((await client.exists(path('n')))?.version).toBe(2);
  });

  it('set with the current version succeeds; a stale one fails BAD_VERSION and changes nothing', async () => {
    const { client, path } = ctx();
    await client.create(path('n'), text('a'));
    await client.set(path('n'), text('b'), 0);
    const err = await expectCode(client.set(path('n'), text('c'), 0), 'BAD_VERSION');
    expect(err.path).toBe(path('n'));
    const { data, stat } = await client.get(path('n'));
    expect(str(data)).toBe('b');
    expect(stat.version).toBe(1);
  });

  it('version 0 means "never written", not "any version", for set', async () => {
    const { client, path } = ctx();
    await client.create(path('fresh'));
    expect((await client.set(path('fresh'), text('1'), 0)).version).toBe(1);
    await client.create(path('written'));
    await client.set(path('written'), text('1'));
    await expectCode(client.set(path('written'), text('2'), 0), 'BAD_VERSION');
  });

  it('version -1 (or none) matches any version', async () => {
    const { client, path } = ctx();
    await client.create(path('n'));
    await client.set(path('n'), text('1'), -1);
    await client.set(path('n'), text('2'));
    expect((await client.set(path('n'), text('3'), -1)).version).toBe(3);
  });

  it('delete with a stale version fails BAD_VERSION and keeps the node', async () => {
    const { client, path } = ctx();
    await client.create(path('n'));
    await client.set(path('n'), text('1'));
    await expectCode(client.delete(path('n'), 0), 'BAD_VERSION');
    expect(await client.exists(path('n'))).not.toBeNull();
    await client.delete(path('n'), 1);
    expect(await client.exists(path('n'))).toBeNull();
  });

  it('delete with version 0 succeeds on a fresh node', async () => {
    const { client, path } = ctx();
    await client.create(path('n'));
    await client.delete(path('n'), 0);
    expect(await client.exists(path('n'))).toBeNull();
  });

  it('a version mismatch is reported before NOT_EMPTY', async () => {
    const { client, path } = ctx();
    await client.create(path('p'));
    await client.create(path('p', 'c'));
    await expectCode(client.delete(path('p'), 7), 'BAD_VERSION');
    await expectCode(client.delete(path('p'), 0), 'NOT_EMPTY');
  });

  it('check, set and delete with version 0 inside multi hold on a fresh node only', async () => {
    const { client, path } = ctx();
    await client.create(path('fresh'));
    await client.multi([{ op: 'check', path: path('fresh'), version: 0 }]);
    const [set] = await client.multi([
      { op: 'set', path: path('fresh'), data: text('v1'), version: 0 },
    ]);
    expect(set).toMatchObject({ op: 'set', stat: { version: 1 } });
    await expectCode(
      client.multi([{ op: 'check', path: path('fresh'), version: 0 }]),
      'BAD_VERSION',
    );
    await expectCode(
      client.multi([{ op: 'set', path: path('fresh'), data: text('v2'), version: 0 }]),
      'BAD_VERSION',
    );
    await expectCode(
      client.multi([{ op: 'delete', path: path('fresh'), version: 0 }]),
      'BAD_VERSION',
    );
    await client.create(path('other'));
    await client.multi([{ op: 'delete', path: path('other'), version: 0 }]);
    expect(await client.exists(path('other'))).toBeNull();
    expect(str((await client.get(path('fresh'))).data)).toBe('v1');
  });

  it('cversion counts child creates and deletes; data changes leave it alone', async () => {
    const { client, path } = ctx();
    await client.create(path('p'));
    await client.create(path('p', 'a'));
    await client.create(path('p', 'b'));
    await client.delete(path('p', 'a'));
    await client.set(path('p'), text('x'));
    await client.set(path('p', 'b'), text('y'));
    const stat = await client.exists(path('p'));
    expect(stat).toMatchObject({ cversion: 3, numChildren: 1, version: 1 });
  });

  it('setAcl adds one to aversion and leaves version alone', async () => {
    const { client, path } = ctx();
    await client.create(path('n'));
    const acl = [{ scheme: 'world', id: 'anyone', perms: 31 }];
    const stat = await client.setAcl(path('n'), acl);
    expect(stat).toMatchObject({ aversion: 1, version: 0 });
    expect((await client.setAcl(path('n'), acl, 1)).aversion).toBe(2);
    await expectCode(client.setAcl(path('n'), acl, 1), 'BAD_VERSION');
  });

  it('zxids and times: creation sets all, a set moves mzxid/mtime, a child create moves pzxid', async () => {
    const { client, path } = ctx();
    await client.create(path('n'));
    const s0 = await client.exists(path('n'));
    if (!s0) throw new Error('node vanished');
    expect(s0.mzxid).toBe(s0.czxid);
    expect(s0.pzxid).toBe(s0.czxid);
    expect(s0.mtime).toBe(s0.ctime);
    expect(Number.isFinite(s0.ctime)).toBe(true);
    const s1 = await client.set(path('n'), text('x'));
    expect(s1.czxid).toBe(s0.czxid);
    expect(s1.mzxid).toBeGreaterThan(s0.mzxid);
    expect(s1.mtime).toBeGreaterThanOrEqual(s0.mtime);
    expect(s1.pzxid).toBe(s0.pzxid);
    await client.create(path('n', 'c'));
    const s2 = await client.exists(path('n'));
    expect(s2?.pzxid).toBeGreaterThan(s1.mzxid);
    expect(s2?.mzxid).toBe(s1.mzxid);
  });

  it('zxids grow across nodes in the order of the writes', async () => {
    const { client, path } = ctx();
    await client.create(path('first'));
    await client.create(path('second'));
    const first = await client.exists(path('first'));
    const second = await client.exists(path('second'));
    expect(second?.czxid).toBeGreaterThan(first?.czxid ?? Number.POSITIVE_INFINITY);
  });

  it('of concurrent setters with the same expected version exactly one succeeds', async () => {
    const { client, connect, path } = ctx();
    await client.create(path('cas'), text('0'));
    const others = await Promise.all([connect(), connect()]);
    const results = await Promise.allSettled(
      [client, ...others].map((c, i) => c.set(path('cas'), text(`w${i}`), 0)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const settled of results) {
      if (settled.status === 'rejected')
        expect(settled.reason).toMatchObject({ code: 'BAD_VERSION' });
    }
    expect((await client.exists(path('cas')))?.version).toBe(1);
  });

  it('of concurrent deleters exactly one succeeds', async () => {
    const { client, connect, path } = ctx();
    await client.create(path('gone'));
    const other = await connect();
    const results = await Promise.allSettled([
      client.delete(path('gone')),
      other.delete(path('gone')),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(rejected?.status === 'rejected' && rejected.reason).toMatchObject({ code: 'NO_NODE' });
  });
};
