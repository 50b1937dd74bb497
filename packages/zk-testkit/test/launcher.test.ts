import { once } from 'node:events';
import net from 'node:net';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import {
  fourLetter,
  serverMode,
  startProxy,
  startZooKeeper,
  type ZooKeeperServer,
  ZooKeeperUnavailableError,
} from '../src/index.js';

const started: ZooKeeperServer[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

describe('zk-testkit', () => {
  it('the global setup provides a server that answers ruok', async () => {
    expect(await fourLetter(inject('zkConnect'), 'ruok')).toBe('imok');
  });

  it('starts a standalone server of its own, stops it and starts it again on the same port', async () => {
    const server = await startZooKeeper({ own: true, tickTimeMs: 200 });
    started.push(server);
    expect(server.kind).toBe('local');
    expect(server.connectString).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await serverMode(server.connectString)).toBe('standalone');
    expect(await fourLetter(server.connectString, 'mntr')).toMatch(/zk_server_state\s+standalone/);
    await server.stop();
    await expect(fourLetter(server.connectString, 'ruok')).rejects.toThrow();
    await server.start();
    expect(await fourLetter(server.connectString, 'ruok')).toBe('imok');
  });

  it('uses ZOOTT_ZK_CONNECT as is, without starting anything', async () => {
    const saved = process.env.ZOOTT_ZK_CONNECT;
    process.env.ZOOTT_ZK_CONNECT = inject('zkConnect');
    try {
      const server = await startZooKeeper();
      expect(server).toMatchObject({ kind: 'external', connectString: inject('zkConnect') });
      await server.stop(); // not ours: leaves it running
      expect(await fourLetter(inject('zkConnect'), 'ruok')).toBe('imok');
    } finally {
      if (saved === undefined) delete process.env.ZOOTT_ZK_CONNECT;
      else process.env.ZOOTT_ZK_CONNECT = saved;
    }
  });

  it('fails with an error naming the three ways to get a ZooKeeper when there is none', async () => {
    const saved = { ...process.env };
    delete process.env.ZOOTT_ZK_CONNECT;
    process.env.ZOOKEEPER_HOME = '/nonexistent/zookeeper';
    process.env.DOCKER_HOST = 'tcp://127.0.0.1:1';
    try {
      const err = await startZooKeeper().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ZooKeeperUnavailableError);
      const message = (err as Error).message;
      expect(message).toContain('ZOOTT_ZK_CONNECT');
      expect(message).toContain('apt-get install zookeeper');
      expect(message).toContain('ZOOKEEPER_HOME');
      expect(message).toContain('Docker');
      expect(message).toContain('/nonexistent/zookeeper');
    } finally {
      process.env = saved;
    }
  });

  it('proxies the client port and can drop every connection', async () => {
    const proxy = await startProxy(inject('zkConnect'));
    try {
      const socket = net.connect(parseInt(proxy.hostPort.split(':')[1]!, 10), '127.0.0.1');
      await once(socket, 'connect');
      const closed = once(socket, 'close');
      await vi.waitFor(() => expect(proxy.connections).toBe(1));
      proxy.dropConnections();
      await closed;
      expect(proxy.connections).toBe(0);
    } finally {
      await proxy.close();
    }
  });
});
