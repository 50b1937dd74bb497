import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A private network of Linux network namespaces for partition tests: a bridge in this
 * process's namespace, and per host a namespace of its own joined to the bridge by a veth
 * pair, with one address on the bridge's subnet. Processes started in a host's namespace
 * (`exec`) reach every other host and this namespace (the bridge's own address) by address;
 * cutting a host (`setCut(true)`) takes its link down, so nothing passes in either direction
 * and both sides see only silence, as in a real partition. The servers and clients in it are
 * the real ones; only the wire between them is cut.
 *
 * Needs root and the `ip` command (iproute2). Every namespace, veth and the bridge are
 * removed by `destroy()`, and at this process's exit if the test did not get that far. A
 * process killed before either (a test worker that timed out) leaves them behind: each
 * namespace's name carries its creator's pid, and the next network made on the machine removes
 * those of creators that are gone.
 */
export interface NamespaceNetwork {
  /** The bridge's address: how hosts reach processes of this (the test's) namespace. */
  readonly gateway: string;
  /** Adds a host (a fresh namespace and address). `name`: a short label, `[a-z0-9]{1,4}`. */
  addHost(name: string): Promise<NetHost>;
  /** Removes every namespace, veth and the bridge. Idempotent. */
  destroy(): Promise<void>;
}

/** One host of a {@link NamespaceNetwork}. */
export interface NetHost {
  readonly name: string;
  /** The network namespace (`ip netns` name). */
  readonly namespace: string;
  /** Its address on the network. */
  readonly address: string;
  /** The command line prefix that runs a program in this host's namespace. */
  readonly exec: readonly string[];
  /** Whether the host is cut off now. */
  readonly cut: boolean;
  /** Cuts the host off the network (its link down), or joins it again. */
  setCut(cut: boolean): Promise<void>;
}

/** Every network this process made and has not destroyed: removed at exit. */
const live = new Set<() => void>();
let hooked = false;

function ip(...args: string[]): Promise<unknown> {
  return run('ip', args);
}

/** Why a network cannot be made here, or `null` when it can. */
export function namespacesUnavailable(): string | null {
  if (process.getuid?.() !== 0)
    return 'network namespaces need root (ip netns add): run the partition tests as root';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'the `ip` command is missing: install iproute2 (apt-get install iproute2)';
  }
  return null;
}

/**
 * Makes an empty network: a bridge with the gateway address on a random 10.x.y.0/24 (so two
 * runs at once do not meet). Throws, saying what is missing, where namespaces cannot be made.
 */
export async function createNetwork(): Promise<NamespaceNetwork> {
  const why = namespacesUnavailable();
  if (why) throw new Error(why);
  await removeOrphans();
  const id = `zt${randomBytes(2).toString('hex')}`;
  const subnet = `10.${100 + Math.floor(Math.random() * 150)}.${Math.floor(Math.random() * 250)}`;
  const bridge = `${id}-br`;
  const gateway = `${subnet}.1`;
  const namespaces: string[] = [];
  const links: string[] = [bridge];
  let destroyed = false;

  const removeSync = () => {
    for (const ns of namespaces) spawnQuiet(['netns', 'del', ns]);
    for (const link of links) spawnQuiet(['link', 'del', link]);
  };
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const remove of live) remove();
    });
  }
  live.add(removeSync);

  await ip('link', 'add', bridge, 'type', 'bridge');
  await ip('addr', 'add', `${gateway}/24`, 'dev', bridge);
  await ip('link', 'set', bridge, 'up');

  let next = 11;
  return {
    gateway,
    async addHost(name: string): Promise<NetHost> {
      if (!/^[a-z0-9]{1,4}$/.test(name)) throw new RangeError(`host name ${name}: [a-z0-9]{1,4}`);
      const namespace = `${id}-${name}-p${process.pid}`;
      const outside = `${id}-${name}o`;
      const inside = `${id}-${name}i`;
      const address = `${subnet}.${next++}`;
      await ip('netns', 'add', namespace);
      namespaces.push(namespace);
      await ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
      links.push(outside);
      await ip('link', 'set', inside, 'netns', namespace);
      await ip('link', 'set', outside, 'master', bridge);
      await ip('link', 'set', outside, 'up');
      const inNs = (...args: string[]) => ip('netns', 'exec', namespace, 'ip', ...args);
      await inNs('link', 'set', 'lo', 'up');
      await inNs('addr', 'add', `${address}/24`, 'dev', inside);
      await inNs('link', 'set', inside, 'up');
      await inNs('route', 'add', 'default', 'via', gateway);
      let cut = false;
      return {
        name,
        namespace,
        address,
        exec: ['ip', 'netns', 'exec', namespace],
        get cut() {
          return cut;
        },
        async setCut(on: boolean) {
          // The bridge side of the pair: down, nothing passes either way; the namespace keeps
          // its address and routes, so its programs see silence, not errors.
          await ip('link', 'set', outside, on ? 'down' : 'up');
          cut = on;
        },
      };
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      // A namespace's end of a veth pair goes with it, and the pair with its end.
      await Promise.allSettled(namespaces.map((ns) => ip('netns', 'del', ns)));
      await Promise.allSettled(links.map((link) => ip('link', 'del', link)));
      live.delete(removeSync);
    },
  };
}

/** A namespace of a network: its id (its links' prefix) and its creator's pid. */
const NAMESPACE = /^(zt[0-9a-f]{4})-[a-z0-9]{1,4}-p(\d+)$/;

/** Removes the namespaces (and the bridges) of networks whose creating process is gone. */
async function removeOrphans(): Promise<void> {
  let listed = '';
  try {
    listed = String((await run('ip', ['netns', 'list'])).stdout);
  } catch {
    return;
  }
  const ids = new Set<string>();
  for (const line of listed.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const match = NAMESPACE.exec(name);
    if (!match || alive(Number(match[2]))) continue;
    ids.add(match[1]!);
    await ip('netns', 'del', name).catch(() => undefined);
  }
  for (const id of ids) await ip('link', 'del', `${id}-br`).catch(() => undefined);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** An `ip` command at exit, when nothing asynchronous runs any more; its failure is ignored. */
function spawnQuiet(args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: 'ignore' });
  } catch {
    // gone already
  }
}
