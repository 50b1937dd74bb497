import { type Coordinator, isZoottError, utf8, type WatchEvent } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { ManualClock, type MemoryCoordinator, MemoryServer } from '../src/index.js';

const text = utf8.encode;

async function failure(
  p: Promise<unknown>,
): Promise<{ code: string; path?: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isZoottError(err)) return { code: err.code, path: err.path, message: err.message };
    throw err;
  }
  throw new Error('expected a rejection');
}

function log(client: Coordinator): string[] {
  const out: string[] = [];
  client.onSession((e) => out.push(e.type));
  return out;
}

describe('MemoryServer sessions and the clock', () => {
  it('expires a session once it has been disconnected for its timeout (ManualClock)', async () => {
    const clock = new ManualClock(5_000);
    const server = new MemoryServer({ clock });
    const owner = await server.connect({ sessionTimeoutMs: 3_000 });
    const watcher = await server.connect();
    await owner.create('/claim', undefined, { ephemeral: true });
    const seen: WatchEvent[] = [];
    await watcher.exists('/claim', { watch: (e) => seen.push(e) });
    const states = log(owner);

    owner.disconnect();
    clock.advance(2_999);
    expect(owner.state).toBe('suspended');
    expect(await watcher.exists('/claim')).not.toBeNull();

    clock.advance(1);
    expect(owner.state).toBe('lost');
    expect(states).toEqual(['suspended', 'lost']);
    expect(server.sessionIds).toEqual([watcher.sessionId]);
    expect(await watcher.exists('/claim')).toBeNull();
    expect(seen).toEqual([{ type: 'deleted', path: '/claim' }]);
  });

  it('a reconnect before the timeout keeps the session and cancels the expiry', async () => {
    const clock = new ManualClock();
    const server = new MemoryServer({ clock });
    const c = await server.connect({ sessionTimeoutMs: 1_000 });
    const id = c.sessionId;
    const states = log(c);
    c.disconnect();
    clock.advance(900);
    c.reconnect();
    clock.advance(10_000);
    expect(states).toEqual(['suspended', 'reconnected']);
    expect(c.state).toBe('connected');
    expect(c.sessionId).toBe(id);
    expect(clock.pendingTimers).toBe(0);
  });

  it('without a clock no timer runs: a disconnected session lives until expireSession', async () => {
    const server = new MemoryServer();
    const c = await server.connect({ sessionTimeoutMs: 1 });
    await c.create('/e', undefined, { ephemeral: true });
    c.disconnect();
    await new Promise((r) => setTimeout(r, 20));
    expect(server.sessionIds).toContain(c.sessionId);
    const states = log(c);
    server.expireSession(c.sessionId ?? '');
    // The server ended it, but a disconnected client only learns so when it comes back.
    expect(c.state).toBe('suspended');
    c.reconnect();
    expect(states).toEqual(['lost']);
    await c.renewSession();
    expect(c.state).toBe('connected');
    expect(await c.exists('/e')).toBeNull();
  });

  it('requests fail CONNECTION_LOSS while disconnected; the session and its ephemerals stay', async () => {
    const server = new MemoryServer();
    const c = await server.connect();
    const other = await server.connect();
    await c.create('/e', undefined, { ephemeral: true });
    c.disconnect();
    expect(await failure(c.get('/e'))).toMatchObject({ code: 'CONNECTION_LOSS', path: '/e' });
    expect(await other.exists('/e')).not.toBeNull();
    c.reconnect();
    expect((await c.get('/e')).stat.ephemeralOwner).toBe(c.sessionId);
  });

  it("re-sets watches after a reconnect the way ZooKeeper's setWatches does", async () => {
    const server = new MemoryServer();
    const c = await server.connect();
    const other = await server.connect();
    await other.create('/changed');
    await other.create('/removed');
    await other.create('/quiet');
    await other.create('/parent');
    const events: WatchEvent[] = [];
    const watch = (e: WatchEvent) => events.push(e);
    await c.get('/changed', { watch });
    await c.get('/removed', { watch });
    await c.get('/quiet', { watch });
    await c.exists('/appeared', { watch });
    await c.children('/parent', { watch });

    c.disconnect();
    await other.set('/changed', text('x'));
    await other.set('/removed', text('x'));
    await other.delete('/removed');
    await other.create('/appeared');
    await other.create('/parent/kid');
    expect(events).toEqual([]);

    c.reconnect();
    await c.exists('/');
    expect(events).toEqual([
      { type: 'dataChanged', path: '/changed' },
      { type: 'deleted', path: '/removed' },
      { type: 'created', path: '/appeared' },
      { type: 'childrenChanged', path: '/parent' },
    ]);
    await other.set('/quiet', text('now'));
    await c.exists('/');
    expect(events.at(-1)).toEqual({ type: 'dataChanged', path: '/quiet' });
  });

  it('close while disconnected ends the session at once', async () => {
    const server = new MemoryServer({ clock: new ManualClock() });
    const c = await server.connect();
    const other = await server.connect();
    await c.create('/e', undefined, { ephemeral: true });
    c.disconnect();
    await c.close();
    expect(c.state).toBe('closed');
    expect(await other.exists('/e')).toBeNull();
    expect(server.sessionIds).toEqual([other.sessionId]);
  });

  it('node times come from the injected clock', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const server = new MemoryServer({ clock });
    const c = await server.connect();
    await c.create('/t');
    clock.advance(1_500);
    const stat = await c.set('/t', text('x'));
    expect(stat.ctime).toBe(1_700_000_000_000);
    expect(stat.mtime).toBe(1_700_000_001_500);
  });
});

describe('chroot', () => {
  it('prefixes every path; replies, errors and watch events show client paths', async () => {
    const server = new MemoryServer();
    const root = await server.connect();
    await root.create('/apps');
    await root.create('/apps/one');
    const app = await server.connect({ chroot: '/apps/one' });

    expect(await app.create('/task', text('t'))).toBe('/task');
    expect(await app.create('/task/item-', undefined, { sequential: true })).toBe(
      '/task/item-0000000000',
    );
    expect(await root.children('/apps/one/task')).toEqual(['item-0000000000']);
    expect(await app.children('/')).toEqual(['task']);

    const events: WatchEvent[] = [];
    await app.get('/task', { watch: (e) => events.push(e) });
    await root.set('/apps/one/task', text('u'));
    await app.exists('/');
    expect(events).toEqual([{ type: 'dataChanged', path: '/task' }]);

    expect(await failure(app.get('/missing'))).toMatchObject({ code: 'NO_NODE', path: '/missing' });
    const [result] = await app.multi([{ op: 'create', path: '/made' }]);
    expect(result).toEqual({ op: 'create', path: '/made' });
    expect(await root.exists('/apps/one/made')).not.toBeNull();
  });

  it('fails NO_NODE under a chroot node that does not exist, like ZooKeeper', async () => {
    const server = new MemoryServer();
    const app = await server.connect({ chroot: '/nowhere' });
    expect(await failure(app.create('/x'))).toMatchObject({ code: 'NO_NODE' });
    expect(await failure(app.children('/'))).toMatchObject({ code: 'NO_NODE' });
  });

  it('rejects an invalid chroot', async () => {
    const server = new MemoryServer();
    expect(await failure(server.connect({ chroot: 'apps/' }))).toMatchObject({
      code: 'INVALID_PATH',
    });
  });
});

describe('determinism', () => {
  /** One scenario with three clients and overlapping watches; returns everything observed. */
  async function scenario(): Promise<string[]> {
    const server = new MemoryServer();
    const [a, b, c] = await Promise.all([server.connect(), server.connect(), server.connect()]);
    const out: string[] = [];
    const w =
      (who: string) =>
      (e: WatchEvent): void => {
        out.push(`${who} ${e.type} ${e.path}`);
      };
    await a.create('/q');
    for (const [name, client] of [
      ['a', a],
      ['b', b],
      ['c', c],
    ] as const) {
      await client.children('/q', { watch: w(`${name}-kids`) });
      await client.exists('/q/job', { watch: w(`${name}-job`) });
    }
    const replies = await Promise.all([
      a.create('/q/job').then((p) => out.push(`a reply ${p}`)),
      b.create('/q/w-', undefined, { sequential: true }).then((p) => out.push(`b reply ${p}`)),
      c.delete('/q/job').then(
        () => out.push('c reply deleted'),
        (e: { code: string }) => out.push(`c reply ${e.code}`),
      ),
    ]);
    out.push(`replies ${replies.length}`);
    return out;
  }

  it('the same scenario yields the same events in the same order, every run', async () => {
    const first = await scenario();
    for (let i = 0; i < 5; i++) expect(await scenario()).toEqual(first);
    // The writer's own watches run before its reply; the others' in the next microtask.
    expect(first.indexOf('a-job created /q/job')).toBeLessThan(first.indexOf('a reply /q/job'));
    expect(first.indexOf('a-job created /q/job')).toBeLessThan(
      first.indexOf('a-kids childrenChanged /q'),
    );
  });

  it("a request's own watches have run when its promise settles", async () => {
    const server = new MemoryServer();
    const c = await server.connect();
    await c.create('/n');
    let fired = false;
    await c.get('/n', {
      watch: () => {
        fired = true;
      },
    });
    await c.set('/n', text('x'));
    expect(fired).toBe(true);
  });
});

describe('server options and isolation', () => {
  it('separate servers share no nodes and no sessions', async () => {
    const one = new MemoryServer();
    const two = new MemoryServer();
    const a = await one.connect();
    const b = await two.connect();
    await a.create('/only-here');
    expect(await b.exists('/only-here')).toBeNull();
    expect(a.sessionId).not.toBe(b.sessionId);
    expect(one.sessionIds).toEqual([a.sessionId]);
    expect(two.sessionIds).toEqual([b.sessionId]);
    one.expireSession(b.sessionId ?? '');
    expect(b.state).toBe('connected');
  });

  it('the data limit is configurable and named in the error', async () => {
    const server = new MemoryServer({ maxDataBytes: 10 });
    const c = await server.connect();
    await c.create('/ok', new Uint8Array(10));
    const err = await failure(c.create('/big', new Uint8Array(11)));
    expect(err.code).toBe('DATA_TOO_LARGE');
    expect(err.message).toContain('11 bytes exceed the limit of 10');
  });

  it('rejects bad options with INVALID_CONFIG naming the field', () => {
    expect(() => new MemoryServer({ maxDataBytes: 0 })).toThrow(/maxDataBytes/);
    expect(() => new MemoryServer({ defaultSessionTimeoutMs: -5 })).toThrow(
      /defaultSessionTimeoutMs/,
    );
  });

  it('has the ZooKeeper system nodes and hands out 16-hex-digit session ids', async () => {
    const server = new MemoryServer();
    const c = await server.connect();
    expect(await c.children('/')).toEqual(['zookeeper']);
    expect((await c.children('/zookeeper')).sort()).toEqual(['config', 'quota']);
    expect(c.sessionId).toMatch(/^[0-9a-f]{16}$/);
    expect(c.sessionTimeoutMs).toBe(10_000);
  });

  it('applies connect-time credentials and the default ACL', async () => {
    const server = new MemoryServer();
    const owner = await server.connect({
      auth: [{ scheme: 'digest', auth: 'ann:pw' }],
      defaultAcl: [{ scheme: 'auth', id: '', perms: 31 }],
    });
    await owner.create('/private', text('p'));
    const stranger = await server.connect();
    expect(await failure(stranger.get('/private'))).toMatchObject({ code: 'NO_AUTH' });
    expect(utf8.decode((await owner.get('/private')).data)).toBe('p');
  });

  it('rejects unknown auth schemes and malformed digest credentials with AUTH_FAILED', async () => {
    const server = new MemoryServer();
    const c = await server.connect();
    expect(await failure(c.addAuth('kerberos', 'x'))).toMatchObject({ code: 'AUTH_FAILED' });
    expect(await failure(c.addAuth('digest', 'no-colon'))).toMatchObject({ code: 'AUTH_FAILED' });
    expect(await failure(server.connect({ auth: [{ scheme: 'nope', auth: '' }] }))).toMatchObject({
      code: 'AUTH_FAILED',
    });
  });

  it('matches ip ACLs against 127.0.0.1, with masks', async () => {
    const server = new MemoryServer();
    const c = await server.connect();
    await c.create('/local', undefined, { acl: [{ scheme: 'ip', id: '127.0.0.0/8', perms: 31 }] });
    await c.create('/remote', undefined, { acl: [{ scheme: 'ip', id: '10.1.2.3', perms: 31 }] });
    await c.get('/local');
    expect(await failure(c.get('/remote'))).toMatchObject({ code: 'NO_AUTH' });
    expect(
      await failure(
        c.create('/bad', undefined, { acl: [{ scheme: 'ip', id: '300.1.1.1', perms: 1 }] }),
      ),
    ).toMatchObject({ code: 'INVALID_ACL' });
  });

  it('rejects bad versions and data with BAD_ARGUMENTS naming the field', async () => {
    const server = new MemoryServer();
    const c: MemoryCoordinator = await server.connect();
    await c.create('/n');
    expect(await failure(c.set('/n', text('x'), -2))).toMatchObject({ code: 'BAD_ARGUMENTS' });
    expect(await failure(c.set('/n', 'text' as unknown as Uint8Array))).toMatchObject({
      code: 'BAD_ARGUMENTS',
    });
    const err = await failure(c.multi([{ op: 'check', path: '/n', version: 1.5 }]));
    expect(err.code).toBe('BAD_ARGUMENTS');
  });

  it('takes null data as no data, as the ZooKeeper adapter does (the shared request checks)', async () => {
    const c = await new MemoryServer().connect();
    await c.create('/n', text('something'));
    const stat = await c.set('/n', null as unknown as Uint8Array);
    expect(stat.dataLength).toBe(0);
    expect((await c.get('/n')).data).toEqual(new Uint8Array(0));
    await c.create('/m', null as unknown as Uint8Array);
    expect((await c.get('/m')).data).toEqual(new Uint8Array(0));
  });

  it('cannot delete the root', async () => {
    const c = await new MemoryServer().connect();
    expect(await failure(c.delete('/'))).toMatchObject({ code: 'BAD_ARGUMENTS' });
  });
});
