import { expect, it } from 'vitest';
import { expectCode, recorder, text } from '../context.js';
import type { GroupTests } from '../group.js';

export const ephemeralTests: GroupTests = (ctx) => {
  it("ephemeralOwner is the creating session's id; persistent nodes have none", async () => {
    const { client, path } = ctx();
    await client.create(path('e'), undefined, { ephemeral: true });
    await client.create(path('p'));
    expect((await client.exists(path('e')))?.ephemeralOwner).toBe(client.sessionId);
    expect((await client.exists(path('p')))?.ephemeralOwner).toBeNull();
  });

  it('another session sees the ephemeral and its owner while the owner lives', async () => {
    const { client, connect, path } = ctx();
    await client.create(path('e'), text('alive'), { ephemeral: true });
    const other = await connect();
    const { stat } = await other.get(path('e'));
    expect(stat.ephemeralOwner).toBe(client.sessionId);
    expect(stat.ephemeralOwner).not.toBe(other.sessionId);
  });

  it('an ephemeral node cannot have children: NO_CHILDREN_FOR_EPHEMERALS', async () => {
    const { client, path } = ctx();
    await client.create(path('e'), undefined, { ephemeral: true });
    await expectCode(client.create(path('e', 'child')), 'NO_CHILDREN_FOR_EPHEMERALS');
    await expectCode(
      client.create(path('e', 'child'), undefined, { ephemeral: true }),
      'NO_CHILDREN_FOR_EPHEMERALS',
    );
    expect((await client.exists(path('e')))?.numChildren).toBe(0);
  });

  it("closing the owner deletes its ephemerals; other sessions' watches fire", async () => {
    const { client, connect, path, timeoutMs } = ctx();
    const owner = await connect();
    await owner.create(path('e1'), undefined, { ephemeral: true });
    await owner.create(path('e2'), undefined, { ephemeral: true });
    await client.create(path('keep'));
    const nodeWatch = recorder(timeoutMs);
    const parentWatch = recorder(timeoutMs);
    await client.exists(path('e1'), { watch: nodeWatch.watch });
    await client.children(ctx().base, { watch: parentWatch.watch });
    await owner.close();
    expect(await nodeWatch.next()).toEqual({ type: 'deleted', path: path('e1') });
    expect(await parentWatch.next()).toEqual({ type: 'childrenChanged', path: ctx().base });
    expect(await client.exists(path('e1'))).toBeNull();
    expect(await client.exists(path('e2'))).toBeNull();
    expect(await client.children(ctx().base)).toEqual(['keep']);
  });

  it("expiring the owner's session deletes its ephemerals; other sessions' watches fire", async () => {
    const { client, connect, harness, path, timeoutMs } = ctx();
    const owner = await connect();
    await owner.create(path('claim'), text('mine'), { ephemeral: true });
    await owner.create(path('kept'), text('persistent'));
    const nodeWatch = recorder(timeoutMs);
    await client.get(path('claim'), { watch: nodeWatch.watch });
    await harness.expireSession(owner);
    expect(await nodeWatch.next()).toEqual({ type: 'deleted', path: path('claim') });
    expect(await client.exists(path('claim'))).toBeNull();
    expect(await client.exists(path('kept'))).not.toBeNull();
  });

  it('once the owner is gone, another session can take the same name', async () => {
    const { client, connect, path, timeoutMs } = ctx();
    const owner = await connect();
    await owner.create(path('lock'), undefined, { ephemeral: true });
    await expectCode(client.create(path('lock'), undefined, { ephemeral: true }), 'NODE_EXISTS');
    const gone = recorder(timeoutMs);
    await client.exists(path('lock'), { watch: gone.watch });
    await owner.close();
    await gone.next();
    await client.create(path('lock'), undefined, { ephemeral: true });
    expect((await client.exists(path('lock')))?.ephemeralOwner).toBe(client.sessionId);
  });

  it('any session may delete an ephemeral it did not create', async () => {
    const { client, connect, path } = ctx();
    const owner = await connect();
    await owner.create(path('e'), undefined, { ephemeral: true });
    await client.delete(path('e'));
    expect(await owner.exists(path('e'))).toBeNull();
  });

  it('an ephemeral created in a multi belongs to that session', async () => {
    const { client, connect, path, timeoutMs } = ctx();
    const owner = await connect();
    await owner.multi([
      { op: 'create', path: path('p') },
      { op: 'create', path: path('p', 'e'), ephemeral: true },
    ]);
    expect((await client.exists(path('p', 'e')))?.ephemeralOwner).toBe(owner.sessionId);
    const gone = recorder(timeoutMs);
    await client.exists(path('p', 'e'), { watch: gone.watch });
    await owner.close();
    expect((await gone.next()).type).toBe('deleted');
    expect(await client.exists(path('p'))).not.toBeNull();
  });
};
