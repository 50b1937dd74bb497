import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { createEngine } from '@zoott/core';
import { afterEach, describe, expect, it } from 'vitest';
import { connectZk, ensureChroot } from '../src/index.js';
import { open, zkServer } from './helpers.js';

/** A port nothing listens on: bound once by us, then released. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const silent: Array<{ server: Server; sockets: Set<Socket> }> = [];
afterEach(async () => {
  for (const s of silent.splice(0)) {
    for (const socket of s.sockets) socket.destroy();
    await new Promise<void>((r) => s.server.close(() => r()));
  }
});

/** A server that accepts connections and never says a word: a hung or partitioned host. */
async function silentPort(): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  silent.push({ server, sockets });
  return (server.address() as { port: number }).port;
}

describe('connecting when the servers are not there', () => {
  it('fails once every host has refused, naming each host, long before its connect timeout', async () => {
    const [a, b] = [await refusedPort(), await refusedPort()];
    const t0 = Date.now();
    const err = await connectZk(`127.0.0.1:${a},127.0.0.1:${b}`, {
      connectTimeoutMs: 30_000,
    }).catch((e: unknown) => e);
    const took = Date.now() - t0;
    expect(err).toMatchObject({ code: 'CONNECTION_LOSS' });
    expect(String((err as Error).message)).toContain(`127.0.0.1:${a} (ECONNREFUSED)`);
    expect(String((err as Error).message)).toContain(`127.0.0.1:${b} (ECONNREFUSED)`);
    // Far below the 30 s timeout, which only the refusals can explain (a loaded machine may
    // stretch their second of retries, so the bound is half the timeout, not a stopwatch).
    expect(took).toBeLessThan(15_000);
    // It gave the hosts about a second, not a single try.
    expect(took).toBeGreaterThanOrEqual(900);
  });

  it('waits the whole connect timeout for a host that accepts and stays silent', async () => {
    const port = await silentPort();
    const t0 = Date.now();
    const err = await connectZk(`127.0.0.1:${port}`, { connectTimeoutMs: 2500 }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'CONNECTION_LOSS' });
    expect(String((err as Error).message)).toMatch(/within 2500 ms \(no server answered\)/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2400);
  });

  it('connects when one host refuses and another is a live server', async () => {
    const zk = await open(`127.0.0.1:${await refusedPort()},${zkServer()}`, {
      connectTimeoutMs: 20_000,
    });
    expect(zk.state).toBe('connected');
  });
});

describe('a chroot that does not exist', () => {
  it('engine.init() fails naming the chroot; after ensureChroot it works', async () => {
    const chroot = `/missing-${randomUUID()}/app`;
    const zk = await open(`${zkServer()}${chroot}`);
    const engine = createEngine(zk, { world: 'files' });
    const err = await engine.init().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NO_NODE' });
    expect(String((err as Error).message)).toContain(`the chroot ${chroot}`);
    expect(String((err as Error).message)).toContain('does not exist');

    await ensureChroot(`${zkServer()}${chroot}`);
    await ensureChroot(`${zkServer()}${chroot}`); // idempotent
    await engine.init();
    expect(await engine.counts()).toMatchObject({ pending: 0 });
    const bare = await open(zkServer());
    expect(await bare.exists(`${chroot}/zoott_p/files`)).not.toBeNull();
  });
});
