import { type Coordinator, isZoottError, utf8 } from '@zoott/core';
import { casLoop, ZkConf } from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';

describeOnBackends('casLoop', (backend) => {
  it('updates a JSON value in one round when nobody interferes', async () => {
    const zk = await backend().connect();
    await zk.create('/a', utf8.encode('1'));
    let rounds = 0;
    for await (const [current, set] of casLoop<number>(zk, '/a')) {
      rounds += 1;
      set(current + 2);
    }
    expect(rounds).toBe(1);
    expect(utf8.decode((await zk.get('/a')).data)).toBe('3');
  });

  it('retries after BAD_VERSION with the fresh value', async () => {
    const zk = await backend().connect();
    const other = await backend().connect();
    await zk.create('/a', utf8.encode('{"n":1}'));
    const seen: number[] = [];
    for await (const [current, set] of casLoop<{ n: number }>(zk, '/a')) {
      seen.push(current.n);
      if (seen.length === 1) await other.set('/a', utf8.encode('{"n":10}')); // sneaks in
      set({ n: current.n + 1 });
    }
    expect(seen).toEqual([1, 10]);
    expect(JSON.parse(utf8.decode((await zk.get('/a')).data))).toEqual({ n: 11 });
  });

  it('writes nothing when the body breaks or does not set', async () => {
    const zk = await backend().connect();
    await zk.create('/a', utf8.encode('1'));
    for await (const [current, set] of casLoop<number>(zk, '/a')) {
      set(current + 2);
      break;
    }
    for await (const _round of casLoop<number>(zk, '/a')) {
      // looked, decided nothing needs to change
    }
    const { data, stat } = await zk.get('/a');
    expect([utf8.decode(data), stat.version]).toEqual(['1', 0]);
  });

  it('works on raw bytes with json: false', async () => {
    const zk = await backend().connect();
    await zk.create('/a', utf8.encode('1'));
    for await (const [current, set] of casLoop(zk, '/a', { json: false })) {
      expect(current).toBeInstanceOf(Uint8Array);
      set(`${utf8.decode(current)}a`);
    }
    expect(utf8.decode((await zk.get('/a')).data)).toBe('1a');
  });

  it('loses no increment under concurrent writers', async () => {
    const first = await backend().connect();
    await first.create('/counter', utf8.encode('0'));
    const writers = 6;
    const each = 5;
    const clients = await Promise.all(Array.from({ length: writers }, () => backend().connect()));
    await Promise.all(
      clients.map(async (zk) => {
        for (let i = 0; i < each; i++) {
          for await (const [n, set] of casLoop<number>(zk, '/counter')) set(n + 1);
        }
      }),
    );
    expect(JSON.parse(utf8.decode((await first.get('/counter')).data))).toBe(writers * each);
  });

  it('accepts a hosts string or a config, and closes the connection it opened', async () => {
    const zk = await backend().connect();
    await zk.create('/a', utf8.encode('0'));
    for (const source of [
      'some-host:2181',
      { hosts: 'some-host:2181' },
      new ZkConf({ hosts: 'h:1' }),
    ]) {
      const opened: Coordinator[] = [];
      const connect = async () => {
        const c = await backend().connect();
        opened.push(c);
        return c;
      };
      for await (const [n, set] of casLoop<number>(source, '/a', { connect })) set(n + 1);
      expect(opened).toHaveLength(1);
      expect(opened[0]?.state).toBe('closed');
    }
    expect(utf8.decode((await zk.get('/a')).data)).toBe('3');
    const err = await (async () => {
      for await (const _ of casLoop('h:1', '/a')) break;
    })().catch((e: unknown) => e);
    expect(isZoottError(err, 'INVALID_CONFIG')).toBe(true);
  });
});
