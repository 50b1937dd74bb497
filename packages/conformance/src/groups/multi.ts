import { expect, it } from 'vitest';
import { expectCode, recorder, sorted, str, text } from '../context.js';
import type { GroupTests } from '../group.js';
import { expectSequential } from './sequential.js';

export const multiTests: GroupTests = (ctx) => {
  it('an empty multi succeeds with no results', async () => {
    const { client } = ctx();
    expect(await client.multi([])).toEqual([]);
  });

  it('mixed ops apply together and report one result per op, in order', async () => {
    const { client, path } = ctx();
    await client.create(path('old'));
    await client.create(path('data'), text('a'));
    const results = await client.multi([
      { op: 'check', path: path('data'), version: 0 },
      { op: 'create', path: path('new'), data: text('n') },
      { op: 'set', path: path('data'), data: text('b'), version: 0 },
      { op: 'delete', path: path('old') },
    ]);
    expect(results).toHaveLength(4);
    expect(results[0]).toEqual({ op: 'check' });
    expect(results[1]).toEqual({ op: 'create', path: path('new') });
    expect(results[2]).toMatchObject({ op: 'set', stat: { version: 1, dataLength: 1 } });
    expect(results[3]).toEqual({ op: 'delete' });
    expect(str((await client.get(path('new'))).data)).toBe('n');
    expect(str((await client.get(path('data'))).data)).toBe('b');
    expect(await client.exists(path('old'))).toBeNull();
  });

  it('a failing op applies nothing: earlier creates, sets and deletes are undone', async () => {
    const { client, path } = ctx();
    await client.create(path('data'), text('before'));
    await client.create(path('victim'));
    await expectCode(
      client.multi([
        { op: 'create', path: path('made') },
        { op: 'set', path: path('data'), data: text('after') },
        { op: 'delete', path: path('victim') },
        { op: 'check', path: path('data'), version: 5 },
      ]),
      'BAD_VERSION',
    );
    expect(await client.exists(path('made'))).toBeNull();
    const { data, stat } = await client.get(path('data'));
    expect(str(data)).toBe('before');
    expect(stat.version).toBe(0);
    expect(await client.exists(path('victim'))).not.toBeNull();
    expect((await client.exists(ctx().base))?.cversion).toBe(2);
  });

  it("the error carries op 'multi', the failing op's index and every op's code", async () => {
    const { client, path } = ctx();
    await client.create(path('exists'));
    const err = await expectCode(
      client.multi([
        { op: 'create', path: path('a') },
        { op: 'create', path: path('exists') },
        { op: 'create', path: path('b') },
      ]),
      'NODE_EXISTS',
    );
    expect(err.op).toBe('multi');
    expect(err.opIndex).toBe(1);
    expect(err.opCodes).toEqual([null, 'NODE_EXISTS', 'RUNTIME_INCONSISTENCY']);
  });

  it('a check on a missing node fails NO_NODE at its index', async () => {
    const { client, path } = ctx();
    const err = await expectCode(
      client.multi([
        { op: 'create', path: path('a') },
        { op: 'check', path: path('missing'), version: -1 },
      ]),
      'NO_NODE',
    );
    expect(err.opIndex).toBe(1);
    expect(err.opCodes).toEqual([null, 'NO_NODE']);
    expect(await client.exists(path('a'))).toBeNull();
  });

  it('a failure in the first op marks every later op RUNTIME_INCONSISTENCY', async () => {
    const { client, path } = ctx();
    const err = await expectCode(
      client.multi([
        { op: 'delete', path: path('missing') },
        { op: 'create', path: path('x') },
        { op: 'create', path: path('y') },
      ]),
      'NO_NODE',
    );
    expect(err.opIndex).toBe(0);
    expect(err.opCodes).toEqual(['NO_NODE', 'RUNTIME_INCONSISTENCY', 'RUNTIME_INCONSISTENCY']);
  });

  it('later ops see earlier ops of the same multi', async () => {
    const { client, path } = ctx();
    const results = await client.multi([
      { op: 'create', path: path('p') },
      { op: 'create', path: path('p', 'c'), data: text('0') },
      { op: 'set', path: path('p', 'c'), data: text('1'), version: 0 },
      { op: 'check', path: path('p', 'c'), version: 1 },
    ]);
    expect(results.map((r) => r.op)).toEqual(['create', 'create', 'set', 'check']);
    expect(str((await client.get(path('p', 'c'))).data)).toBe('1');
  });

  it('create then delete of the same node in one multi leaves no node', async () => {
    const { client, path } = ctx();
    await client.multi([
      { op: 'create', path: path('t') },
      { op: 'delete', path: path('t') },
    ]);
    expect(await client.exists(path('t'))).toBeNull();
  });

  it('delete of a node with children inside multi fails NOT_EMPTY', async () => {
    const { client, path } = ctx();
    await client.create(path('p'));
    await client.create(path('p', 'c'));
    const err = await expectCode(client.multi([{ op: 'delete', path: path('p') }]), 'NOT_EMPTY');
    expect(err.opIndex).toBe(0);
  });

  it('deleting children and then their parent works in one multi', async () => {
    const { client, path } = ctx();
    await client.create(path('p'));
    await client.create(path('p', 'a'));
    await client.create(path('p', 'b'));
    await client.multi([
      { op: 'delete', path: path('p', 'a') },
      { op: 'delete', path: path('p', 'b') },
      { op: 'delete', path: path('p') },
    ]);
    expect(await client.children(ctx().base)).toEqual([]);
  });

  it('sequential creates inside a multi return the real names, numbered in op order', async () => {
    const { client, path } = ctx();
    await client.create(path('q'));
    await client.create(path('q', 'first'));
    const results = await client.multi([
      { op: 'create', path: path('q', 's-'), sequential: true },
      { op: 'create', path: path('q', 's-'), sequential: true },
    ]);
    const names = results.map((r) => (r.op === 'create' ? r.path : ''));
    expectSequential(names[0] ?? '', path('q'), 's-', 1);
    expectSequential(names[1] ?? '', path('q'), 's-', 2);
    const listed = (await client.children(path('q'))).map((n) => path('q', n));
    expect(sorted(listed)).toEqual(sorted([path('q', 'first'), ...names]));
  });

  it('a failed multi fires no watches', async () => {
    const { client, path } = ctx();
    await client.create(path('data'));
    const created = recorder(ctx().timeoutMs);
    const changed = recorder(ctx().timeoutMs);
    await client.exists(path('new'), { watch: created.watch });
    await client.get(path('data'), { watch: changed.watch });
    await expectCode(
      client.multi([
        { op: 'create', path: path('new') },
        { op: 'set', path: path('data'), data: text('x') },
        { op: 'create', path: path('missing', 'child') },
      ]),
      'NO_NODE',
    );
    await client.exists(ctx().base);
    expect(created.events).toEqual([]);
    expect(changed.events).toEqual([]);
    // The watches are still armed and fire on the real change.
    await client.create(path('new'));
    await client.exists(ctx().base);
    expect(created.events).toEqual([{ type: 'created', path: path('new') }]);
  });

  it('the multi fences a writer: a stale check makes the whole batch fail', async () => {
    const { client, connect, path } = ctx();
    await client.create(path('claim'), text('worker-1'));
    const other = await connect();
    await other.set(path('claim'), text('worker-2'));
    await expectCode(
      client.multi([
        { op: 'check', path: path('claim'), version: 0 },
        { op: 'create', path: path('done'), data: text('result') },
      ]),
      'BAD_VERSION',
    );
    expect(await other.exists(path('done'))).toBeNull();
  });
};
