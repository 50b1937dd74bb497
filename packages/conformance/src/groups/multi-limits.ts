import type { Coordinator, Op } from '@zoott/core';
import { expect, it } from 'vitest';
import { expectCode, sorted, str, text } from '../context.js';
import type { GroupTests } from '../group.js';

/**
 * Room for paths on top of `maxDataBytes` in one request, as the tests use it: both adapters
 * refuse a request whose encoded frame exceeds `maxDataBytes` + FRAME_ALLOWANCE_BYTES (1023;
 * paths, ACLs and headers all count), so paths and data over `maxDataBytes` + 1024 can never
 * pass, and data at the limit with a quarter of that in paths always does.
 */
const PATH_ALLOWANCE_BYTES = 1024;

const bytes = (n: number, fill = 0x5a) => new Uint8Array(n).fill(fill);

/** A child of `base` whose full path takes exactly `pathBytes` bytes (ASCII name). */
function pathOfLength(base: string, pathBytes: number, fill: string): string {
  const nameLength = pathBytes - base.length - 1;
  if (nameLength < 1) throw new Error(`conformance: ${pathBytes} bytes is too short a path`);
  return `${base}/${fill.repeat(nameLength)}`;
}

/**
 * The size limits of a multi as a whole, and the order of its checks. A multi is one request:
 * its ops may each fit the data limit and still, together, not fit. The whole batch is refused
 * before any op is looked at, so nothing of it is ever written.
 */
export const multiLimitsTests: GroupTests = (ctx, declared) => {
  const max = () => declared.maxDataBytes;
  const freshReader = (): Promise<Coordinator> => ctx().connect();

  it('ops that each fit but together carry more than maxDataBytes fail DATA_TOO_LARGE, naming both sizes, and write nothing', async () => {
    const { client, path, base } = ctx();
    await client.create(path('data'), text('before'));
    await client.create(path('keep'), text('kept'));
    // Four ops of a quarter each, plus one byte: each fits, together they are just over.
    const quarter = Math.floor(max() / 4) + 1;
    const total = 4 * quarter;
    expect(total).toBeGreaterThan(max());
    const err = await expectCode(
      client.multi([
        { op: 'create', path: path('new-a'), data: bytes(quarter) },
        { op: 'set', path: path('data'), data: bytes(quarter), version: 0 },
        { op: 'delete', path: path('keep') },
        { op: 'create', path: path('new-b'), data: bytes(quarter) },
        { op: 'check', path: path('data'), version: 1 },
        { op: 'create', path: path('new-c'), data: bytes(quarter) },
      ]),
      'DATA_TOO_LARGE',
    );
    expect(err.op).toBe('multi');
    expect(err.message).toContain(String(total));
    expect(err.message).toContain(String(max()));
    // No single op is to blame: the request is refused as a whole.
    expect(err.opIndex).toBeUndefined();

    const reader = await freshReader();
    expect(sorted(await reader.children(base))).toEqual(['data', 'keep']);
    for (const name of ['new-a', 'new-b', 'new-c']) {
      expect(await reader.exists(path(name)), name).toBeNull();
    }
    const data = await reader.get(path('data'));
    expect(str(data.data)).toBe('before');
    expect(data.stat.version).toBe(0);
    expect(str((await reader.get(path('keep'))).data)).toBe('kept');
    expect((await reader.exists(base))?.cversion).toBe(2);
  });

  it('ops that together carry exactly maxDataBytes succeed', async () => {
    const { client, path } = ctx();
    await client.create(path('data'));
    const first = Math.floor(max() / 3);
    const second = Math.floor(max() / 3);
    const rest = max() - first - second;
    const results = await client.multi([
      { op: 'create', path: path('a'), data: bytes(first) },
      { op: 'set', path: path('data'), data: bytes(second) },
      { op: 'create', path: path('b'), data: bytes(rest) },
    ]);
    expect(results.map((r) => r.op)).toEqual(['create', 'set', 'create']);
    expect((await client.exists(path('a')))?.dataLength).toBe(first);
    expect((await client.exists(path('data')))?.dataLength).toBe(second);
    expect((await client.exists(path('b')))?.dataLength).toBe(rest);
  });

  it('the data of the whole multi is checked before its ops: a bad path or version later on is not what is reported', async () => {
    const { client, path, base } = ctx();
    const bad: Op[] = [
      { op: 'create', path: `${base}//broken` },
      { op: 'set', path: path('x'), data: text('x'), version: -5 },
    ];
    await expectCode(
      client.multi([
        { op: 'create', path: path('big'), data: bytes(max()) },
        { op: 'create', path: path('more'), data: bytes(1) },
        ...bad,
      ]),
      'DATA_TOO_LARGE',
    );
    // Within the data limit, the same bad op is reported as such.
    const err = await expectCode(
      client.multi([{ op: 'create', path: path('small'), data: bytes(1) }, ...bad]),
      'INVALID_PATH',
    );
    expect(err.path).toBe(`${base}//broken`);
    expect(await client.children(base)).toEqual([]);
  });

  it('data that fits but paths that push the request past maxDataBytes + 1 KiB fail BAD_ARGUMENTS and write nothing', async () => {
    const { client, path, base } = ctx();
    await client.create(path('data'), text('before'));
    const data = max() - 512;
    // 1600 bytes of paths: together over the allowance by about 64 bytes.
    const long1 = pathOfLength(base, 800, 'p');
    const long2 = pathOfLength(base, 800, 'q');
    const err = await expectCode(
      client.multi([
        { op: 'create', path: long1, data: bytes(data) },
        { op: 'set', path: path('data'), data: text('after') },
        { op: 'create', path: long2 },
      ]),
      'BAD_ARGUMENTS',
    );
    expect(err.op).toBe('multi');
    expect(err.opIndex).toBeUndefined();
    expect(long1.length + long2.length + data).toBeGreaterThan(max() + PATH_ALLOWANCE_BYTES);
    // Refused up front: the session is untouched, nothing was written.
    expect(client.state).toBe('connected');
    expect(await client.children(base)).toEqual(['data']);
    const { data: kept, stat } = await client.get(path('data'));
    expect(str(kept)).toBe('before');
    expect(stat.version).toBe(0);
  });

  it('data at the limit with paths well inside the allowance succeeds', async () => {
    const { client, base } = ctx();
    const half = PATH_ALLOWANCE_BYTES / 4;
    const long1 = pathOfLength(base, half, 'r');
    const long2 = pathOfLength(base, half, 's');
    const first = Math.floor(max() / 2);
    await client.multi([
      { op: 'create', path: long1, data: bytes(first) },
      { op: 'create', path: long2, data: bytes(max() - first) },
    ]);
    expect((await client.exists(long1))?.dataLength).toBe(first);
    expect((await client.exists(long2))?.dataLength).toBe(max() - first);
  });

  it('argument checks come before the session state: a closed client still reports bad input', async () => {
    const { path, base, connect } = ctx();
    const closed = await connect();
    await closed.close();
    const tooLarge = declared.tooLargeDataCodes ?? ['DATA_TOO_LARGE' as const];
    await expectCode(closed.multi([{ op: 'create', path: `${base}//broken` }]), 'INVALID_PATH');
    await expectCode(
      closed.multi([
        { op: 'create', path: path('a'), data: bytes(max()) },
        { op: 'create', path: path('b'), data: bytes(1) },
      ]),
      'DATA_TOO_LARGE',
    );
    await expectCode(
      closed.multi([{ op: 'delete', path: path('a'), version: -2 }]),
      'BAD_ARGUMENTS',
    );
    await expectCode(closed.create(path('a'), bytes(max() + 1)), tooLarge);
    await expectCode(closed.set(path('a'), bytes(max() + 1)), tooLarge);
    await expectCode(closed.set(path('a'), text('x'), -2), 'BAD_ARGUMENTS');
    await expectCode(closed.delete(path('a'), -2), 'BAD_ARGUMENTS');
    // Good input meets the closed session.
    await expectCode(closed.multi([{ op: 'create', path: path('a') }]), 'CLOSED');
    await expectCode(closed.multi([]), 'CLOSED');
    await expectCode(closed.create(path('a')), 'CLOSED');
  });

  it('an op that is not an object fails BAD_ARGUMENTS naming its index, and writes nothing', async () => {
    const { client, path } = ctx();
    for (const junk of [null, undefined, 7, 'create']) {
      const ops = [{ op: 'create', path: path('first') }, junk] as unknown as Op[];
      const err = await client.multi(ops).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'BAD_ARGUMENTS', op: 'multi', opIndex: 1 });
    }
    expect(await client.exists(path('first'))).toBeNull();
  });
};

/** Several ops of one multi on the same node, and what the batch shares. */
export const multiSamePathTests: GroupTests = (ctx) => {
  it('a second create, delete or stale set of the same path fails at its own index', async () => {
    const { client, path, base } = ctx();
    await client.create(path('data'));
    const dupCreate = await expectCode(
      client.multi([
        { op: 'create', path: path('twice') },
        { op: 'create', path: path('twice') },
      ]),
      'NODE_EXISTS',
    );
    expect(dupCreate.opIndex).toBe(1);
    expect(dupCreate.opCodes).toEqual([null, 'NODE_EXISTS']);

    const dupDelete = await expectCode(
      client.multi([
        { op: 'create', path: path('gone') },
        { op: 'delete', path: path('gone') },
        { op: 'delete', path: path('gone') },
      ]),
      'NO_NODE',
    );
    expect(dupDelete.opIndex).toBe(2);
    expect(dupDelete.opCodes).toEqual([null, null, 'NO_NODE']);

    const staleSet = await expectCode(
      client.multi([
        { op: 'set', path: path('data'), data: text('1'), version: 0 },
        { op: 'set', path: path('data'), data: text('2'), version: 0 },
      ]),
      'BAD_VERSION',
    );
    expect(staleSet.opIndex).toBe(1);
    expect(staleSet.opCodes).toEqual([null, 'BAD_VERSION']);

    expect(await client.children(base)).toEqual(['data']);
    expect((await client.exists(path('data')))?.version).toBe(0);
    // In order, each op sees the one before it.
    await client.multi([
      { op: 'set', path: path('data'), data: text('1'), version: 0 },
      { op: 'set', path: path('data'), data: text('2'), version: 1 },
    ]);
    expect((await client.exists(path('data')))?.version).toBe(2);
  });

  it('every change of one multi carries the same zxid', async () => {
    const { client, path, base } = ctx();
    await client.create(path('old'));
    const results = await client.multi([
      { op: 'create', path: path('a') },
      { op: 'create', path: path('b') },
      { op: 'set', path: path('old'), data: text('x') },
    ]);
    const statA = await client.exists(path('a'));
    const statB = await client.exists(path('b'));
    const set = results[2];
    if (!statA || !statB || set?.op !== 'set')
      throw new Error('conformance: multi results missing');
    expect(statB.czxid).toBe(statA.czxid);
    expect(set.stat.mzxid).toBe(statA.czxid);
    expect((await client.exists(base))?.pzxid).toBe(statA.czxid);
  });
};
