import type { Acl, Coordinator } from '@zoott/core';
import { expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, expectCode, str, text } from '../context.js';
import { DIGEST_IDS, digestEntry, OPEN_ACL, PERMS } from '../expected.js';
import type { GroupTests } from '../group.js';

/** The suite's admin digest user has ALL on every restricted node, so teardown can clean up. */
const CREDENTIALS = `${ADMIN_USER}:${ADMIN_PASSWORD}` as const;
const ADMIN = digestEntry(CREDENTIALS, PERMS.ALL);
const world = (perms: number): Acl => ({ scheme: 'world', id: 'anyone', perms });

export const aclTests: GroupTests = (ctx, harness) => {
  /** What the `auth` scheme adds for a session besides its addAuth credentials. */
  const transport = (client: Coordinator): Acl[] =>
    (ctx().harness.sessionIdentities?.(client) ?? []).map((i) => ({ ...i, perms: PERMS.ALL }));

  /** A node only the admin user may touch, with one child, made by an authenticated session. */
  async function lockedNode() {
    const { client, connect, path } = ctx();
    await client.addAuth('digest', CREDENTIALS);
    await client.create(path('locked'), text('secret'), { acl: [ADMIN] });
    await client.create(path('locked', 'child'), undefined, { acl: [ADMIN] });
    const stranger = await connect();
    return { owner: client, stranger };
  }

  it('nodes are created with the open ACL by default', async () => {
    const { client, path } = ctx();
    await client.create(path('n'));
    const { acl, stat } = await client.getAcl(path('n'));
    expect(acl).toEqual([...OPEN_ACL]);
    expect(stat.aversion).toBe(0);
  });

  it('a digest ACL locks out an unauthenticated session from get and children: NO_AUTH', async () => {
    const { stranger } = await lockedNode();
    const { path } = ctx();
    const err = await expectCode(stranger.get(path('locked')), 'NO_AUTH');
    expect(err.path).toBe(path('locked'));
    await expectCode(stranger.children(path('locked')), 'NO_AUTH');
    await expectCode(stranger.childrenWithStat(path('locked')), 'NO_AUTH');
  });

  it('a digest ACL locks out set, create, delete and setAcl: NO_AUTH, nothing changes', async () => {
    const { owner, stranger } = await lockedNode();
    const { path } = ctx();
    await expectCode(stranger.set(path('locked'), text('hacked')), 'NO_AUTH');
    await expectCode(stranger.create(path('locked', 'intruder')), 'NO_AUTH');
    await expectCode(stranger.delete(path('locked', 'child')), 'NO_AUTH');
    await expectCode(stranger.setAcl(path('locked'), [...OPEN_ACL]), 'NO_AUTH');
    const { data, stat } = await owner.get(path('locked'));
    expect(str(data)).toBe('secret');
    expect(stat).toMatchObject({ version: 0, aversion: 0, numChildren: 1 });
  });

  it('getAcl needs READ or ADMIN: NO_AUTH without either', async () => {
    const { stranger } = await lockedNode();
    await expectCode(stranger.getAcl(ctx().path('locked')), 'NO_AUTH');
  });

  it('exists needs no permission', async () => {
    const { stranger } = await lockedNode();
    const stat = await stranger.exists(ctx().path('locked'));
    expect(stat).toMatchObject({ numChildren: 1, dataLength: 6 });
  });

  it('after addAuth with the right password every operation works', async () => {
    const { stranger } = await lockedNode();
    const { path } = ctx();
    await stranger.addAuth('digest', CREDENTIALS);
    expect(str((await stranger.get(path('locked'))).data)).toBe('secret');
    await stranger.set(path('locked'), text('updated'));
    await stranger.create(path('locked', 'new'), undefined, { acl: [ADMIN] });
    await stranger.delete(path('locked', 'new'));
    expect(await stranger.children(path('locked'))).toEqual(['child']);
    expect((await stranger.getAcl(path('locked'))).acl).toEqual([ADMIN]);
  });

  it('a wrong password authenticates a different identity: still NO_AUTH', async () => {
    const { stranger } = await lockedNode();
    await stranger.addAuth('digest', `${ADMIN_USER}:not-the-password`);
    await expectCode(stranger.get(ctx().path('locked')), 'NO_AUTH');
    await expectCode(stranger.set(ctx().path('locked'), text('x')), 'NO_AUTH');
  });

  it('a session may hold several identities; any one that matches is enough', async () => {
    const { client, connect, path } = ctx();
    await client.addAuth('digest', CREDENTIALS);
    await client.create(path('bob-only'), text('b'), {
      acl: [digestEntry('bob:pw', PERMS.READ), ADMIN],
    });
    const other = await connect();
    await other.addAuth('digest', 'carol:pw');
    await other.addAuth('digest', 'bob:pw');
    expect(str((await other.get(path('bob-only'))).data)).toBe('b');
    await expectCode(other.set(path('bob-only'), text('x')), 'NO_AUTH');
  });

  it('READ alone allows get and children but not set', async () => {
    const { client, connect, path } = ctx();
    await client.addAuth('digest', CREDENTIALS);
    await client.create(path('ro'), text('r'), { acl: [world(PERMS.READ), ADMIN] });
    const other = await connect();
    expect(str((await other.get(path('ro'))).data)).toBe('r');
    expect(await other.children(path('ro'))).toEqual([]);
    await expectCode(other.set(path('ro'), text('w')), 'NO_AUTH');
  });

  it('create needs CREATE on the parent and delete needs DELETE on the parent', async () => {
    const { client, connect, path } = ctx();
    await client.addAuth('digest', CREDENTIALS);
    const allButCreate = PERMS.ALL & ~PERMS.CREATE;
    const allButDelete = PERMS.ALL & ~PERMS.DELETE;
    await client.create(path('no-create'), undefined, { acl: [world(allButCreate), ADMIN] });
    await client.create(path('no-delete'), undefined, { acl: [world(allButDelete), ADMIN] });
    const other = await connect();
    await expectCode(other.create(path('no-create', 'c')), 'NO_AUTH');
    await other.create(path('no-delete', 'c'));
    await expectCode(other.delete(path('no-delete', 'c')), 'NO_AUTH');
    // The child's own (open) ACL does not matter for its deletion.
    expect((await other.getAcl(path('no-delete', 'c'))).acl).toEqual([...OPEN_ACL]);
  });

  it('getAcl with READ but not ADMIN masks digest hashes as user:x', async () => {
    const { client, connect, path } = ctx();
    await client.addAuth('digest', CREDENTIALS);
    await client.create(path('n'), undefined, { acl: [world(PERMS.READ), ADMIN] });
    const other = await connect();
    const { acl } = await other.getAcl(path('n'));
    expect(acl).toEqual([world(PERMS.READ), { ...ADMIN, id: `${ADMIN_USER}:x` }]);
    expect((await client.getAcl(path('n'))).acl).toEqual([world(PERMS.READ), ADMIN]);
  });

  it('getAcl and setAcl round-trip; setAcl checks aversion', async () => {
    const { client, path } = ctx();
    await client.addAuth('digest', CREDENTIALS);
    await client.create(path('n'));
    const acl = [digestEntry('dave:pw', PERMS.READ | PERMS.WRITE), ADMIN];
    const stat = await client.setAcl(path('n'), acl, 0);
    expect(stat.aversion).toBe(1);
    const read = await client.getAcl(path('n'));
    expect(read.acl).toEqual(acl);
    expect(read.stat.aversion).toBe(1);
    await expectCode(client.setAcl(path('n'), [...OPEN_ACL], 0), 'BAD_VERSION');
    await client.setAcl(path('n'), [...OPEN_ACL], 1);
    expect((await client.getAcl(path('n'))).acl).toEqual([...OPEN_ACL]);
  });

  it("the 'auth' scheme expands to the session's authenticated identities", async () => {
    const { client, connect, path } = ctx();
    await client.addAuth('digest', CREDENTIALS);
    await client.create(path('mine'), text('m'), {
      acl: [{ scheme: 'auth', id: '', perms: PERMS.ALL }],
    });
    const expected = [
      ...transport(client),
      { scheme: 'digest', id: DIGEST_IDS[CREDENTIALS], perms: PERMS.ALL },
    ];
    const { acl } = await client.getAcl(path('mine'));
    expect(acl).toHaveLength(expected.length);
    expect(acl).toEqual(expect.arrayContaining(expected));
    const other = await connect();
    await expectCode(other.get(path('mine')), 'NO_AUTH');
  });

  if (harness.sessionIdentities === undefined)
    it("the 'auth' scheme on a session without credentials fails INVALID_ACL", async () => {
      const { client, path } = ctx();
      await expectCode(
        client.create(path('n'), undefined, {
          acl: [{ scheme: 'auth', id: '', perms: PERMS.ALL }],
        }),
        'INVALID_ACL',
      );
      expect(await client.exists(path('n'))).toBeNull();
    });
  else
    it("the 'auth' scheme on a session with only its transport identity grants that identity", async () => {
      const { client, connect, path } = ctx();
      // The admin entry beside it only lets the teardown remove the node.
      await client.create(path('n'), text('t'), {
        acl: [{ scheme: 'auth', id: '', perms: PERMS.ALL }, ADMIN],
      });
      const expected = [...transport(client), ADMIN];
      expect(expected.length).toBeGreaterThan(1);
      const { acl } = await client.getAcl(path('n'));
      expect(acl).toHaveLength(expected.length);
      expect(acl).toEqual(expect.arrayContaining(expected));
      const other = await connect();
      await expectCode(other.get(path('n')), 'NO_AUTH');
    });

  it('malformed ACLs fail INVALID_ACL on create and setAcl', async () => {
    const { client, path } = ctx();
    const bad: Acl[][] = [
      [],
      [{ scheme: 'world', id: 'somebody', perms: PERMS.ALL }],
      [{ scheme: 'digest', id: 'no-colon-here', perms: PERMS.ALL }],
      [{ scheme: 'no-such-scheme', id: 'x', perms: PERMS.ALL }],
    ];
    for (const acl of bad) {
      await expectCode(client.create(path('n'), undefined, { acl }), 'INVALID_ACL');
    }
    expect(await client.exists(path('n'))).toBeNull();
    await client.create(path('n'));
    for (const acl of bad) await expectCode(client.setAcl(path('n'), acl), 'INVALID_ACL');
    expect((await client.exists(path('n')))?.aversion).toBe(0);
  });

  it('ACLs are enforced inside multi; check needs READ', async () => {
    const { stranger } = await lockedNode();
    const { path } = ctx();
    const err = await expectCode(
      stranger.multi([
        { op: 'create', path: path('free') },
        { op: 'create', path: path('locked', 'sneaky') },
      ]),
      'NO_AUTH',
    );
    expect(err.opIndex).toBe(1);
    expect(await stranger.exists(path('free'))).toBeNull();
    await expectCode(
      stranger.multi([{ op: 'check', path: path('locked'), version: 0 }]),
      'NO_AUTH',
    );
  });
};
