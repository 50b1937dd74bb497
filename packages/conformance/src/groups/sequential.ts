import { expect, it } from 'vitest';
import { sorted, str, text } from '../context.js';
import type { GroupTests } from '../group.js';

const SUFFIX = /^(.*?)(\d{10})$/;

/**
 * Asserts that `created` is a child of `parent` whose name starts with `prefix` and ends with
 * `counter` in 10 digits. Nothing in between is pinned: an adapter may put a marker there for
 * "protected" creates.
 */
export function expectSequential(
  created: string,
  parent: string,
  prefix: string,
  counter: number,
): void {
  const slash = created.lastIndexOf('/');
  const name = created.slice(slash + 1);
  expect(created.slice(0, slash)).toBe(parent);
  expect(name.startsWith(prefix), `${name} starts with ${prefix}`).toBe(true);
  expect(name.slice(-10)).toBe(String(counter).padStart(10, '0'));
}

function suffixOf(path: string): number {
  const match = SUFFIX.exec(path);
  if (!match) throw new Error(`${path} has no 10-digit sequence suffix`);
  return Number(match[2]);
}

export const sequentialTests: GroupTests = (ctx) => {
  it('appends a 10-digit zero-padded counter, starting at 0 under a fresh parent', async () => {
    const { client, path } = ctx();
    await client.create(path('q'));
    const created = await client.create(path('q', 'item-'), text('x'), { sequential: true });
    expectSequential(created, path('q'), 'item-', 0);
    expect(str((await client.get(created)).data)).toBe('x');
  });

  it('suffixes under one parent strictly increase', async () => {
    const { client, path } = ctx();
    await client.create(path('q'));
    const numbers: number[] = [];
    for (let i = 0; i < 5; i++) {
      numbers.push(suffixOf(await client.create(path('q', 'n-'), undefined, { sequential: true })));
    }
    expect(numbers).toEqual([0, 1, 2, 3, 4]);
  });

  it('the counter counts every child ever created under the parent; deletes do not advance it', async () => {
    // ZooKeeper keeps "children created" as the persisted cversion and reports cversion as
    // creates + deletes, so after deletes the suffix is below the reported cversion.
    const { client, path } = ctx();
    await client.create(path('q'));
    await client.create(path('q', 'plain-a'));
    await client.create(path('q', 'plain-b'));
    await client.delete(path('q', 'plain-a'));
    expect((await client.exists(path('q')))?.cversion).toBe(3);
    const first = await client.create(path('q', 's-'), undefined, { sequential: true });
    expect(suffixOf(first)).toBe(2);
    await client.delete(path('q', 'plain-b'));
    await client.delete(first);
    const second = await client.create(path('q', 's-'), undefined, { sequential: true });
    expect(suffixOf(second)).toBe(3);
    expect(await client.exists(path('q'))).toMatchObject({ cversion: 7, numChildren: 1 });
  });

  it('different prefixes share one counter per parent', async () => {
    const { client, path } = ctx();
    await client.create(path('q'));
    const createdA = await client.create(path('q', 'a-'), undefined, { sequential: true });
    const createdB = await client.create(path('q', 'b-'), undefined, { sequential: true });
    expectSequential(createdA, path('q'), 'a-', 0);
    expectSequential(createdB, path('q'), 'b-', 1);
  });

  it('the created names are what children() lists', async () => {
    const { client, path } = ctx();
    await client.create(path('q'));
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(await client.create(path('q', 'job-'), undefined, { sequential: true }));
    }
    const listed = (await client.children(path('q'))).map((n) => path('q', n));
    expect(sorted(listed)).toEqual(sorted(made));
  });

  it('concurrent sequential creates from several sessions all get distinct names', async () => {
    const { client, connect, path } = ctx();
    await client.create(path('q'));
    const clients = [client, ...(await Promise.all([connect(), connect()]))];
    const created = await Promise.all(
      clients.flatMap((sessionClient) =>
        [0, 1, 2].map(() => sessionClient.create(path('q', 'w-'), undefined, { sequential: true })),
      ),
    );
    expect(new Set(created).size).toBe(9);
    expect(sorted(created.map(suffixOf).map(String))).toEqual(
      sorted([0, 1, 2, 3, 4, 5, 6, 7, 8].map(String)),
    );
  });

  it('ephemeral sequential nodes are owned by the session and numbered like the others', async () => {
    const { client, path } = ctx();
    await client.create(path('q'));
    await client.create(path('q', 'p-'), undefined, { sequential: true });
    const eph = await client.create(path('q', 'e-'), undefined, {
      sequential: true,
      ephemeral: true,
    });
    expectSequential(eph, path('q'), 'e-', 1);
    expect((await client.exists(eph))?.ephemeralOwner).toBe(client.sessionId);
  });
};
