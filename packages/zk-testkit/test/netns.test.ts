import { execFileSync, spawnSync } from 'node:child_process';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createNetwork, fourLetter, startZooKeeper } from '../src/index.js';

/** Names of the network namespaces that exist now. */
function namespaces(): string[] {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter(Boolean);
}

/** Names of the links of this namespace. */
function links(): string[] {
  return execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(': ')[1]?.split('@')[0] ?? '')
    .filter(Boolean);
}

/** Whether a TCP connection to `address:port` is refused, answered, or meets silence. */
function probe(address: string, port: number, silentMs = 1500): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('silence');
    }, silentMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code ?? 'error');
    });
  });
}

// The namespace network partition tests stand on (needs root and iproute2, as CI has).
describe('a network of namespaces', { timeout: 120_000 }, () => {
  it('runs a server on a host of its own; a cut host meets silence both ways, and is back once joined', async () => {
    const network = await createNetwork();
    try {
      const host = await network.addHost('zk');
      expect(host.address).toMatch(/^10\.\d+\.\d+\.11$/);
      const server = await startZooKeeper({ host });
      try {
        expect(server.connectString).toBe(`${host.address}:2181`);
        expect(await fourLetter(server.connectString, 'ruok')).toBe('imok');
        await host.setCut(true);
        expect(host.cut).toBe(true);
        // No refusal, no reset: nothing comes back at all.
        expect(await probe(host.address, 2181)).toBe('silence');
        await host.setCut(false);
        expect(await fourLetter(server.connectString, 'ruok')).toBe('imok');
      } finally {
        await server.stop();
      }
    } finally {
      await network.destroy();
    }
  });

  it('destroy removes every namespace and link it made', async () => {
    const network = await createNetwork();
    const host = await network.addHost('a');
    await network.addHost('b');
    const id = host.namespace.slice(0, 6);
    expect(namespaces().filter((n) => n.startsWith(`${id}-`))).toHaveLength(2);
    expect(links().filter((l) => l.startsWith(`${id}-`))).toHaveLength(3);
    await network.destroy();
    expect(namespaces().filter((n) => n.startsWith(`${id}-`))).toEqual([]);
    expect(links().filter((l) => l.startsWith(`${id}-`))).toEqual([]);
    await network.destroy(); // idempotent
  });

  it("removes what a creator that died left behind, and nothing of a live creator's", async () => {
    // A process that is gone by now: its pid names the leftovers.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    const orphan = `ztdead-x-p${dead}`;
    execFileSync('ip', ['netns', 'add', orphan]);
    execFileSync('ip', ['link', 'add', 'ztdead-br', 'type', 'bridge']);
    const live = await createNetwork();
    try {
      await live.addHost('c');
      expect(namespaces()).not.toContain(orphan);
      expect(links()).not.toContain('ztdead-br');
      // A second network while the first is alive leaves the first alone.
      const second = await createNetwork();
      await second.destroy();
      expect(namespaces().some((n) => n.endsWith(`-c-p${process.pid}`))).toBe(true);
    } finally {
      await live.destroy();
      spawnSync('ip', ['netns', 'del', orphan]);
      spawnSync('ip', ['link', 'del', 'ztdead-br']);
    }
  });
});
