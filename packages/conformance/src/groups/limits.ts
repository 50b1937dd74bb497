import type { Coordinator } from '@zoott/core';
import { expect, it } from 'vitest';
import { expectCode, str, text } from '../context.js';
import type { GroupTests } from '../group.js';

/** Paths ZooKeeper rejects, each for a different rule. */
const BAD_PATHS = [
  '',
  'relative',
  '/trailing/',
  '//double',
  '/a//b',
  '/a/./b',
  '/a/../b',
  '/nul\u0000char',
];

export const limitsTests: GroupTests = (ctx, declared) => {
  const over = () => declared.overLimitBytes ?? declared.maxDataBytes + 1;
  const tooLarge = () => declared.tooLargeDataCodes ?? ['DATA_TOO_LARGE' as const];
  const bytes = (n: number, fill = 0x5a) => new Uint8Array(n).fill(fill);

  /** Over-limit writes may cost the connection on some backends: check with a fresh session. */
  const freshReader = (): Promise<Coordinator> => ctx().connect();

  it('data of exactly maxDataBytes can be created, read back and set', async () => {
    const { client, path } = ctx();
    const max = declared.maxDataBytes;
    await client.create(path('big'), bytes(max));
    const { data, stat } = await client.get(path('big'));
    expect(data.length).toBe(max);
    expect(stat.dataLength).toBe(max);
    expect(data[max - 1]).toBe(0x5a);
    expect((await client.set(path('big'), bytes(max, 0x33))).dataLength).toBe(max);
  });

  it('a create over the limit fails and creates nothing', async () => {
    const { client, path } = ctx();
    await expectCode(client.create(path('huge'), bytes(over())), tooLarge());
    expect(await (await freshReader()).exists(path('huge'))).toBeNull();
  });

  it('a set over the limit fails and keeps the old data', async () => {
    const { client, path } = ctx();
    await client.create(path('n'), text('small'));
    await expectCode(client.set(path('n'), bytes(over())), tooLarge());
    const { data, stat } = await (await freshReader()).get(path('n'));
    expect(str(data)).toBe('small');
    expect(stat.version).toBe(0);
  });

  it('an over-limit op inside multi fails the whole multi', async () => {
    const { client, path } = ctx();
    await expectCode(
      client.multi([
        { op: 'create', path: path('first') },
        { op: 'create', path: path('huge'), data: bytes(over()) },
      ]),
      tooLarge(),
    );
    const reader = await freshReader();
    expect(await reader.exists(path('first'))).toBeNull();
    expect(await reader.exists(path('huge'))).toBeNull();
  });

  it('a request whose paths and data exceed the packet budget fails BAD_ARGUMENTS up front', async () => {
    const { client, path, base } = ctx();
    // Over `maxDataBytes` + the 1 KiB path allowance: ZooKeeper would drop the connection.
    const long = `${base}/${'p'.repeat(declared.maxDataBytes + 2048)}`;
    await expectCode(client.create(long), 'BAD_ARGUMENTS');
    await expectCode(client.exists(long), 'BAD_ARGUMENTS');
    const half = `${base}/${'m'.repeat(Math.ceil(declared.maxDataBytes / 2) + 1024)}`;
    await expectCode(
      client.multi([
        { op: 'create', path: half },
        { op: 'create', path: `${half}x` },
      ]),
      'BAD_ARGUMENTS',
    );
    // Refused without a round trip: the session is untouched and nothing was created.
    await client.create(path('after'), text('ok'));
    expect(await client.children(base)).toEqual(['after']);
  });

  it('invalid paths fail INVALID_PATH for every operation', async () => {
    const { client } = ctx();
    for (const bad of BAD_PATHS) {
      await expectCode(client.create(bad), 'INVALID_PATH');
      await expectCode(client.get(bad), 'INVALID_PATH');
      await expectCode(client.set(bad, text('x')), 'INVALID_PATH');
      await expectCode(client.delete(bad), 'INVALID_PATH');
      await expectCode(client.exists(bad), 'INVALID_PATH');
      await expectCode(client.children(bad), 'INVALID_PATH');
      await expectCode(client.getAcl(bad), 'INVALID_PATH');
    }
  });

  it('an invalid path fails before anything is written, inside multi too', async () => {
    const { client, path, base } = ctx();
    await expectCode(client.create(`${base}/bad/`), 'INVALID_PATH');
    await expectCode(client.create(`${base}/a/../b`), 'INVALID_PATH');
    const err = await expectCode(
      client.multi([
        { op: 'create', path: path('valid') },
        { op: 'create', path: `${base}//broken` },
      ]),
      'INVALID_PATH',
    );
    expect(err.op).toBe('multi');
    expect(await client.children(base)).toEqual([]);
  });
};
