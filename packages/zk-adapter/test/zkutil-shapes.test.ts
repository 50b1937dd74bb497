import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { digestAcl } from '@zoott/core';
import { decodeJson, encodeJson } from '@zoott/core/internal';
import {
  CachedReader,
  casLoop,
  exportHierarchy,
  initHierarchy,
  Lock,
  ZkConf,
} from '@zoott/zk-adapter/recipes';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freshNamespace, open } from './helpers.js';

// zkutil's call shapes on a real ZooKeeper: recipes given a hosts string, a dict or a ZkConf
// connect through this adapter by themselves, as zkutil's do (core's need a `connect`).

const XP = ['digest', 'xp', '123'] as const;

describe("@zoott/zk-adapter/recipes: zkutil's call shapes on ZooKeeper", () => {
  const savedEnv = process.env.ZOOTT_ZK_AUTH;
  afterEach(() => {
    if (savedEnv === undefined) delete process.env.ZOOTT_ZK_AUTH;
    else process.env.ZOOTT_ZK_AUTH = savedEnv;
    vi.restoreAllMocks();
  });

  it('casLoop takes a hosts string, a dict and a ZkConf, and no increment is lost', async () => {
    const hosts = await freshNamespace();
    const zk = await open(hosts);
    await zk.create('/counter', encodeJson(0));
    const sources = [hosts, { hosts }, new ZkConf({ hosts })];
    // Nine loops at once, three of each shape, each with a session of its own.
    await Promise.all(
      Array.from({ length: 9 }, async (_, i) => {
        for await (const [n, set] of casLoop<number>(sources[i % 3]!, '/counter')) set(n + 1);
      }),
    );
    expect(decodeJson((await zk.get('/counter')).data)).toBe(9);
  });

  it("casLoop's session carries the dict's auth, or the environment's (zkutil's config.zk_auth)", async () => {
    const hosts = await freshNamespace();
    const admin = await open(hosts, { auth: [{ scheme: 'digest', auth: 'xp:123' }] });
    await admin.create('/secret', encodeJson(1), { acl: [digestAcl('xp', '123', 'cdrwa')] });
    for await (const [n, set] of casLoop<number>({ hosts, auth: [...XP] }, '/secret')) set(n + 1);
    delete process.env.ZOOTT_ZK_AUTH;
    const denied = await (async () => {
      for await (const [n, set] of casLoop<number>(hosts, '/secret')) set(n + 1);
    })().catch((err: unknown) => err);
    expect(denied).toMatchObject({ code: 'NO_AUTH' });
    process.env.ZOOTT_ZK_AUTH = 'digest:xp:123';
    for await (const [n, set] of casLoop<number>(hosts, '/secret')) set(n + 1);
    expect(decodeJson((await admin.get('/secret')).data)).toBe(3);
  });

  it('initHierarchy takes the hosts string, with users and auth as zkutil has them', async () => {
    const hosts = await freshNamespace();
    const tree = {
      node1: { __val__: { jobs: 10 }, __acl__: { xp: 'cdrwa', foo: 'rw' }, node11: {} },
      node2: { node21: {} },
    };
    const users = { xp: '123', foo: 'bar' };
    expect(await initHierarchy(hosts, tree, users, [...XP])).toEqual({ created: 4, existing: 0 });
    const admin = await open(hosts, { auth: [{ scheme: 'digest', auth: 'xp:123' }] });
    const back = await exportHierarchy(admin, '/node1');
    expect(back.__val__).toEqual({ jobs: 10 });
    expect(back.__acl__).toEqual({ foo: 'rw', xp: 'cdrwa' });
    expect(Object.keys(back)).toContain('node11');
  });

  it('CachedReader.open takes a hosts string and follows the node', async () => {
    const hosts = await freshNamespace();
    const zk = await open(hosts);
    await zk.create('/bar', encodeJson({ jobs: { num: 10 } }));
    const cr = await CachedReader.open<{ jobs: { num: number } }>(hosts, '/bar');
    try {
      expect(cr.value.jobs.num).toBe(10);
      const change = cr.watch(30_000);
      await zk.set('/bar', encodeJson({ jobs: { num: 11 } }));
      expect(await change).toEqual([{ jobs: { num: 10 } }, { jobs: { num: 11 } }]);
      expect(cr.get('jobs')).toEqual({ num: 11 });
    } finally {
      await cr.close();
    }
    expect(await cr.watch()).toBeNull();
  });

  it("a Lock given zkutil's zkconf dict connects by itself: its dir, node id, ACL and auth", async () => {
    const hosts = await freshNamespace();
    const lost: string[] = [];
    const zkconf = {
      hosts,
      acl: [['xp', '123', 'cdrwa']] as [string, string, string][],
      auth: [...XP] as [string, string, string],
      node_id: 'web-3',
      lock_dir: 'my_locks/',
    };
    const lock = new Lock('foo_lock', { conf: zkconf, onLost: (why) => lost.push(why) });
    const other = new Lock('foo_lock', {
      conf: { ...zkconf, node_id: 'web-4' },
      onLost: (why) => lost.push(why),
    });
    expect(lock.path).toBe('/my_locks/foo_lock');
    await lock.acquire(10_000);
    const admin = await open(hosts, { auth: [{ scheme: 'digest', auth: 'xp:123' }] });
    const held = decodeJson<{ id: string }>((await admin.get('/my_locks/foo_lock')).data);
    expect(held.id).toMatch(/^web-3-/);
    expect(await admin.getAcl('/my_locks/foo_lock')).toMatchObject({
      acl: [digestAcl('xp', '123', 'cdrwa')],
    });
    const [ok, holder] = await other.tryAcquire();
    expect([ok, holder]).toEqual([false, held.id]);
    await other.release();
    await lock.release();
    expect(await admin.exists('/my_locks/foo_lock')).toBeNull();
    // Released by the holder: nothing was lost.
    expect(lost).toEqual([]);
  });
});

describe('the zk-adapter README: the zkutil examples, run as written', () => {
  const readme = fileURLToPath(new URL('../README.md', import.meta.url));

  it('initHierarchy, casLoop, CachedReader and Lock on a hosts string', async () => {
    const text = readFileSync(readme, 'utf8');
    const at = text.indexOf("## zkutil's call shapes");
    const block = /```ts\n([\s\S]*?)\n```/.exec(text.slice(at))?.[1];
    if (at < 0 || !block) throw new Error("README.md: no ```ts block under zkutil's call shapes");
    const hosts = await freshNamespace();
    const logs: unknown[][] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args));
    const saved = process.env.ZK_HOSTS;
    process.env.ZK_HOSTS = hosts;
    const dir = mkdtempSync(join(tmpdir(), 'zoott-zkutil-'));
    try {
      writeFileSync(join(dir, 'example.ts'), block);
      await import(/* @vite-ignore */ join(dir, 'example.ts'));
    } finally {
      if (saved === undefined) delete process.env.ZK_HOSTS;
      else process.env.ZK_HOSTS = saved;
      rmSync(dir, { recursive: true, force: true });
    }
    const zk = await open(hosts, { auth: [{ scheme: 'digest', auth: 'xp:123' }] });
    expect(decodeJson((await zk.get('/counter')).data)).toBe(1);
    expect(await zk.exists('/my_locks/foo_lock')).toBeNull();
    expect(logs).toEqual([
      ['doit', 0],
      ['doit', 1],
      ['doit', 2],
      ['locked by', 'web-3'],
      ['released'],
    ]);
  });
});
