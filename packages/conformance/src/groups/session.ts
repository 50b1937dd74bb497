import { expect, it } from 'vitest';
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  expectCode,
  recorder,
  sessionRecorder,
  str,
  text,
} from '../context.js';
import type { GroupTests } from '../group.js';

const SESSION_ID = /^[0-9a-f]{16}$/;

export const sessionTests: GroupTests = (ctx, declared) => {
  it('a connected client has a 16-hex-digit session id and a positive timeout', async () => {
    const { client } = ctx();
    expect(client.state).toBe('connected');
    expect(client.sessionId).toMatch(SESSION_ID);
    expect(client.sessionTimeoutMs).toBeGreaterThan(0);
  });

  it('every connect opens a distinct session', async () => {
    const { client, connect } = ctx();
    const others = await Promise.all([connect(), connect()]);
    const ids = new Set([client.sessionId, ...others.map((c) => c.sessionId)]);
    expect(ids.size).toBe(3);
  });

  it("expiring the session makes the client 'lost'", async () => {
    const { connect, harness, timeoutMs } = ctx();
    const victim = await connect();
    const events = sessionRecorder(victim, timeoutMs);
    await harness.expireSession(victim);
    const lost = await events.waitFor('lost');
    expect(lost.sessionId).toBeNull();
    expect(victim.state).toBe('lost');
    expect(victim.sessionId).toBeNull();
  });

  it('after lost every request fails SESSION_EXPIRED', async () => {
    const { connect, harness, path, timeoutMs } = ctx();
    const victim = await connect();
    const events = sessionRecorder(victim, timeoutMs);
    await harness.expireSession(victim);
    await events.waitFor('lost');
    await expectCode(victim.get(ctx().base), 'SESSION_EXPIRED');
    await expectCode(victim.create(path('x')), 'SESSION_EXPIRED');
    await expectCode(victim.multi([{ op: 'create', path: path('x') }]), 'SESSION_EXPIRED');
    expect(await ctx().client.exists(path('x'))).toBeNull();
  });

  it("renewSession after lost opens a new session: 'connected' with a new id", async () => {
    const { connect, harness, path, timeoutMs } = ctx();
    const victim = await connect();
    const before = victim.sessionId;
    await victim.create(path('eph'), undefined, { ephemeral: true });
    const events = sessionRecorder(victim, timeoutMs);
    await harness.expireSession(victim);
    await events.waitFor('lost');
    await victim.renewSession();
    const connected = await events.waitFor('connected');
    expect(victim.state).toBe('connected');
    expect(victim.sessionId).toMatch(SESSION_ID);
    expect(victim.sessionId).not.toBe(before);
    expect(connected.sessionId).toBe(victim.sessionId);
    // The old session's ephemeral is gone, so the name is free for the new session.
    await victim.create(path('eph'), undefined, { ephemeral: true });
    expect((await victim.exists(path('eph')))?.ephemeralOwner).toBe(victim.sessionId);
  });

  it('renewSession keeps the credentials added with addAuth', async () => {
    const { client, connect, harness, path, timeoutMs } = ctx();
    const credentials = `${ADMIN_USER}:${ADMIN_PASSWORD}`;
    await client.addAuth('digest', credentials);
    await client.create(path('private'), text('p'), {
      acl: [{ scheme: 'auth', id: '', perms: 31 }],
    });
    const victim = await connect();
    await victim.addAuth('digest', credentials);
    const events = sessionRecorder(victim, timeoutMs);
    await harness.expireSession(victim);
    await events.waitFor('lost');
    await victim.renewSession();
    expect(str((await victim.get(path('private'))).data)).toBe('p');
  });

  it("close makes the client 'closed'; later requests fail CLOSED; close is idempotent", async () => {
    const { connect, timeoutMs } = ctx();
    const coordinator = await connect();
    const events = sessionRecorder(coordinator, timeoutMs);
    await coordinator.close();
    await events.waitFor('closed');
    expect(coordinator.state).toBe('closed');
    await expectCode(coordinator.get(ctx().base), 'CLOSED');
    await coordinator.close();
    expect(events.events.filter((e) => e.type === 'closed')).toHaveLength(1);
  });

  it('a removed session listener hears nothing more', async () => {
    const { connect, timeoutMs } = ctx();
    const coordinator = await connect();
    const kept = sessionRecorder(coordinator, timeoutMs);
    const removed = sessionRecorder(coordinator, timeoutMs);
    removed.stop();
    await coordinator.close();
    await kept.waitFor('closed');
    expect(removed.events).toEqual([]);
  });

  it('the watches of an expired session never fire', async () => {
    const { client, connect, harness, path, timeoutMs } = ctx();
    await client.create(path('n'));
    const victim = await connect();
    const watchRecorder = recorder(timeoutMs);
    await victim.get(path('n'), { watch: watchRecorder.watch });
    const events = sessionRecorder(victim, timeoutMs);
    await harness.expireSession(victim);
    await events.waitFor('lost');
    await client.set(path('n'), text('x'));
    await victim.renewSession();
    await victim.exists(path('n'));
    expect(watchRecorder.events).toEqual([]);
  });

  if (declared.dropConnection) {
    it("a dropped connection gives 'suspended' then 'reconnected' with the same session", async () => {
      const { connect, harness, path, timeoutMs } = ctx();
      const coordinator = await connect();
      const id = coordinator.sessionId;
      await coordinator.create(path('eph'), text('still here'), { ephemeral: true });
      const events = sessionRecorder(coordinator, timeoutMs);
      await harness.dropConnection?.(coordinator);
      await events.waitFor('reconnected');
      const types = events.events.map((e) => e.type);
      expect(types.indexOf('suspended')).toBeGreaterThanOrEqual(0);
      expect(types.indexOf('suspended')).toBeLessThan(types.indexOf('reconnected'));
      expect(types).not.toContain('lost');
      expect(coordinator.sessionId).toBe(id);
      expect(coordinator.state).toBe('connected');
      const { data, stat } = await coordinator.get(path('eph'));
      expect(str(data)).toBe('still here');
      expect(stat.ephemeralOwner).toBe(id);
    });

    it('watches set before a dropped connection still fire after it', async () => {
      const { client, connect, harness, path, timeoutMs } = ctx();
      await client.create(path('n'));
      const coordinator = await connect();
      const watchRecorder = recorder(timeoutMs);
      await coordinator.get(path('n'), { watch: watchRecorder.watch });
      const events = sessionRecorder(coordinator, timeoutMs);
      await harness.dropConnection?.(coordinator);
      await events.waitFor('reconnected');
      await client.set(path('n'), text('after'));
      expect(await watchRecorder.next()).toEqual({ type: 'dataChanged', path: path('n') });
    });
  }
};
