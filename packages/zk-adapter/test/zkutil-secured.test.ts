import { randomUUID } from 'node:crypto';
import { Perms } from '@zoott/core';
import { decodeJson, encodeJson } from '@zoott/core/internal';
import {
  CachedReader,
  casLoop,
  connectWith,
  initHierarchy,
  Lock,
  zkConfOf,
} from '@zoott/zk-adapter/recipes';
import { serverTls } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from './helpers.js';
import { clientTls, securedServer, testCertificates } from './secured-servers.js';

// zkutil's call shapes on a secured ZooKeeper: a config says where (hosts) and as whom in
// ACL terms (auth); how to reach a TLS port with a SASL login is the recipe's `connect`.

const alice = { username: 'alice', password: 'alice-secret' } as const;

describe('@zoott/zk-adapter/recipes on a secured ZooKeeper', { timeout: 120_000 }, () => {
  const certs = testCertificates();
  let server: Awaited<ReturnType<typeof securedServer>>;

  beforeAll(async () => {
    server = await securedServer({
      tls: serverTls(certs),
      sasl: { users: { alice: alice.password } },
    });
  });
  afterAll(async () => {
    await server?.stop();
    certs.dispose();
  });

  it('casLoop, initHierarchy, CachedReader and Lock reach a TLS port with a SASL login through connectWith', async () => {
    const hosts = server.secureConnectString;
    const connect = connectWith({ tls: clientTls(certs), sasl: alice });
    const root = `/zkutil-${randomUUID()}`;
    const mine = [{ scheme: 'sasl', id: 'alice', perms: Perms.ALL }];
    const owner = await open(hosts, { tls: clientTls(certs), sasl: alice });
    await owner.create(root, undefined, { acl: mine });
    await owner.create(`${root}/counter`, encodeJson(0), { acl: mine });
    // Each recipe's own session is alice's over TLS: the sasl ACL admits nobody else.
    for (const source of [hosts, { hosts }])
      for await (const [n, set] of casLoop<number>(source, `${root}/counter`, { connect }))
        set(n + 1);
    expect(decodeJson((await owner.get(`${root}/counter`)).data)).toBe(2);
    expect(
      await initHierarchy(hosts, { conf: { __val__: { num: 3 } } }, {}, null, {
        connect,
        root,
      }),
    ).toEqual({ created: 1, existing: 0 });
    const cr = await CachedReader.open<{ num: number }>(hosts, `${root}/conf`, { connect });
    try {
      expect(cr.value).toEqual({ num: 3 });
    } finally {
      await cr.close();
    }
    let lost = false;
    const lock = new Lock('secured', {
      conf: { hosts, lock_dir: `${root.slice(1)}/locks/` },
      connect,
      onLost: () => {
        lost = true;
      },
    });
    await lock.acquire();
    expect(await owner.exists(`${root}/locks/secured`)).not.toBeNull();
    await lock.release();
    expect(await owner.exists(`${root}/locks/secured`)).toBeNull();
    expect(lost).toBe(false);
  });

  it('without it, a recipe on the TLS port fails at once saying the port expects TLS', async () => {
    const err = await (async () => {
      for await (const [n, set] of casLoop<number>(server.secureConnectString, '/x')) set(n + 1);
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CONNECTION_LOSS', field: 'tls' });
    expect(String(err)).toMatch(/expects TLS/);
  });

  it('a dict carrying tls or sasl is refused, pointing at connectWith', () => {
    for (const key of ['tls', 'sasl'] as const) {
      const dict = { hosts: server.secureConnectString, [key]: {} } as never;
      expect(() => zkConfOf(dict)).toThrow(
        expect.objectContaining({
          code: 'INVALID_CONFIG',
          field: key,
          message: expect.stringContaining(`connectWith({ ${key} })`),
        }),
      );
    }
  });
});
