import { type Coordinator, isZoottError, utf8 } from '@zoott/core';
import { closeCoordinator, isCoordinator, openCoordinator, ZkConf } from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';

describeOnBackends('connection helpers', (backend) => {
  it('closeCoordinator ends the session, ephemerals included, and tolerates a second close', async () => {
    const zk = await backend().connect();
    const observer = await backend().connect();
    await zk.create('/eph', undefined, { ephemeral: true });
    await closeCoordinator(zk);
    expect(zk.state).toBe('closed');
    expect(await observer.exists('/eph')).toBeNull();
    await closeCoordinator(zk);
    const err = await closeCoordinator({} as Coordinator).catch((e: unknown) => e);
    expect(isZoottError(err, 'BAD_ARGUMENTS')).toBe(true);
  });

  it('openCoordinator passes a Coordinator through and connects a config with its auth', async () => {
    const zk = await backend().connect();
    expect(isCoordinator(zk)).toBe(true);
    expect(await openCoordinator(zk, undefined)).toMatchObject({ coordinator: zk, owned: false });

    const seen: ZkConf[] = [];
    const opened = await openCoordinator(
      { hosts: 'h:2181', auth: 'digest:xp:123' },
      async (conf) => {
        seen.push(conf);
        return backend().connect();
      },
    );
    expect(opened.owned).toBe(true);
    expect(seen[0]?.hosts()).toBe('h:2181');
    // The auth was added: a node only xp may read is readable.
    await zk.addAuth('digest', 'xp:123');
    await zk.create('/mine', utf8.encode('x'), {
      acl: new ZkConf({ acl: [['xp', '123', 'cdrwa']] }).digestAcl() ?? undefined,
    });
    expect(utf8.decode((await opened.coordinator.get('/mine')).data)).toBe('x');
    await closeCoordinator(opened.coordinator);

    const err = await openCoordinator('h:2181', undefined).catch((e: unknown) => e);
    expect(isZoottError(err, 'INVALID_CONFIG')).toBe(true);
  });
});
