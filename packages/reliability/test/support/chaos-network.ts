/**
 * The network of a chaos run: the ensemble, and how one worker (the cut-off slot) reaches it
 * so that the run can cut it off. Two kinds:
 * - `proxy`: the ensemble on 127.0.0.1, the cut-off worker through one TCP proxy per member;
 *   a partition silences the proxies;
 * - `netns`: every member and the cut-off worker on a host of their own (a Linux network
 *   namespace joined to a bridge, zk-testkit's createNetwork); a partition takes the worker's
 *   link down, and a split takes one member's link down: the ensemble splits 2/1, the cut
 *   member cut off from its peers and from every client.
 */
import {
  createNetwork,
  type NamespaceNetwork,
  type NetHost,
  startEnsemble,
  startProxy,
  type ZkProxy,
  type ZooKeeperEnsemble,
  type ZooKeeperTls,
} from '@zoott/zk-testkit';

export type ChaosNetworkKind = 'proxy' | 'netns';

export interface ChaosNetwork {
  readonly kind: ChaosNetworkKind;
  readonly ensemble: ZooKeeperEnsemble;
  /** The hosts every other client connects to (the TLS ports of a TLS run). */
  readonly connect: string;
  /** The hosts the cut-off worker connects to (without a chroot). */
  readonly cutOffConnect: string;
  /** Command line prefix of the cut-off worker's process (empty: this namespace). */
  readonly cutOffLauncher: readonly string[];
  /** Cuts the cut-off worker off, or lets it through again. */
  cutOff(on: boolean): Promise<void>;
  /** Cuts ensemble member `i` off its peers and clients, or joins it again (`netns` only). */
  readonly splitMember: ((i: number, on: boolean) => Promise<void>) | null;
  close(): Promise<void>;
}

/** With `tls`, every client talks TLS to the members' secureClientPort (`proxy` only). */
export async function startChaosNetwork(
  kind: ChaosNetworkKind,
  tls?: ZooKeeperTls,
): Promise<ChaosNetwork> {
  if (kind === 'netns' && tls) throw new Error('a chaos run over TLS uses the proxy network');
  return kind === 'netns' ? namespaceNetwork() : proxyNetwork(tls);
}

async function proxyNetwork(tls: ZooKeeperTls | undefined): Promise<ChaosNetwork> {
  const ensemble = await startEnsemble(tls ? { security: { tls } } : {});
  /** Where clients connect: the TLS ports of a TLS run (the proxies pass TLS through sealed). */
  const address = (m: { connectString: string; secureConnectString?: string | undefined }) =>
    tls ? m.secureConnectString! : m.connectString;
  const proxies: ZkProxy[] = [];
  try {
    for (const m of ensemble.members) proxies.push(await startProxy(address(m)));
  } catch (err) {
    await Promise.all(proxies.map((p) => p.close()));
    await ensemble.stop();
    throw err;
  }
  return {
    kind: 'proxy',
    ensemble,
    connect: address(ensemble),
    cutOffConnect: proxies.map((p) => p.hostPort).join(','),
    cutOffLauncher: [],
    async cutOff(on) {
      for (const p of proxies) p.setPartitioned(on);
    },
    splitMember: null,
    async close() {
      await Promise.all(proxies.map((p) => p.close()));
      await ensemble.stop();
    },
  };
}

async function namespaceNetwork(): Promise<ChaosNetwork> {
  const net: NamespaceNetwork = await createNetwork();
  let ensemble: ZooKeeperEnsemble | null = null;
  try {
    const members: NetHost[] = [];
    for (const name of ['z1', 'z2', 'z3']) members.push(await net.addHost(name));
    const worker = await net.addHost('w');
    ensemble = await startEnsemble({ hosts: members });
    const started = ensemble;
    return {
      kind: 'netns',
      ensemble: started,
      connect: started.connectString,
      cutOffConnect: started.connectString,
      cutOffLauncher: worker.exec,
      cutOff: (on) => worker.setCut(on),
      splitMember: (i, on) => members[i]!.setCut(on),
      async close() {
        try {
          await started.stop();
        } finally {
          await net.destroy();
        }
      },
    };
  } catch (err) {
    await ensemble?.stop();
    await net.destroy();
    throw err;
  }
}
