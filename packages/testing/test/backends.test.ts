import { utf8 } from '@zoott/core';
import { expect, it } from 'vitest';
import { describeOnBackends } from '../src/index.js';

describeOnBackends('test backends', (backend) => {
  it('gives each test its own empty namespace shared by its sessions', async () => {
    const a = await backend().connect();
    const b = await backend().connect();
    expect(await a.children('/')).toEqual(backend().name === 'zookeeper' ? [] : ['zookeeper']);
    await a.create('/x', utf8.encode('hi'));
    expect(utf8.decode((await b.get('/x')).data)).toBe('hi');
  });

  it('drops a connection without ending the session', async () => {
    const client = await backend().connect();
    const id = client.sessionId;
    const events: string[] = [];
    client.onSession((e) => events.push(e.type));
    await backend().dropConnection(client);
    expect(events).toEqual(['suspended', 'reconnected']);
    expect(client.state).toBe('connected');
    expect(client.sessionId).toBe(id);
  });

  it('expires a session: the client sees lost and its ephemerals go', async () => {
    const owner = await backend().connect();
    const other = await backend().connect();
    await owner.create('/eph', undefined, { ephemeral: true });
    await backend().expireSession(owner);
    expect(owner.state).toBe('lost');
    expect(await other.exists('/eph')).toBeNull();
  });
});
