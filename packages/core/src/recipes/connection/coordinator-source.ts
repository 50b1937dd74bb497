import type { Coordinator } from '../../contract/coordinator.js';
import { ZoottError } from '../../contract/errors.js';
import { ZkConf, type ZkConfInit } from '../conf/zk-conf.js';

/**
 * Opens a session for a config. Core has no ZooKeeper client, so whoever needs recipes to
 * connect by themselves injects one: the CLI and worker pass the zk-adapter's factory, e.g.
 * `(conf) => connectZk(conf.hosts())`; tests pass a memory server's `connect`. The factory
 * only connects: the recipe adds `conf.auth()` itself.
 */
export type ConnectFn = (conf: ZkConf) => Promise<Coordinator>;

/**
 * What a recipe that "accepts a connection string or a config" takes: a connected
 * Coordinator (used as is, never closed by the recipe), or a hosts string, `ZkConfInit` or
 * `ZkConf` (the recipe connects through `connect` and closes that connection when done).
 */
export type CoordinatorSource = Coordinator | ZkConf | ZkConfInit | string;

/** Duck-typed check: zoott never requires a particular class for a Coordinator. */
export function isCoordinator(value: unknown): value is Coordinator {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return ['create', 'get', 'set', 'delete', 'exists', 'children', 'onSession', 'close'].every(
    (m) => typeof fields[m] === 'function',
  );
}

/** A coordinator to use, and whether the recipe opened it (and so must close it). */
export interface OpenedCoordinator {
  coordinator: Coordinator;
  owned: boolean;
  conf: ZkConf | null;
}

/**
 * Resolves a `CoordinatorSource`. For anything but a Coordinator, connects with `connect`
 * and adds the config's auth; if adding auth fails the new session is closed again.
 *
 * @throws ZoottError INVALID_CONFIG when a connection is needed but no `connect` was given.
 */
export async function openCoordinator(
  source: CoordinatorSource,
  connect: ConnectFn | undefined,
): Promise<OpenedCoordinator> {
  if (isCoordinator(source)) return { coordinator: source, owned: false, conf: null };
  const conf = ZkConf.from(source);
  if (!connect) {
    throw new ZoottError(
      'INVALID_CONFIG',
      'a connection string or config needs a `connect` factory (e.g. the zk-adapter connectZk); or pass a Coordinator',
      { field: 'connect' },
    );
  }
  const coordinator = await connect(conf);
  try {
    const auth = conf.authArgs();
    if (auth) await coordinator.addAuth(auth[0], auth[1]);
  } catch (err) {
    await coordinator.close().catch(() => undefined);
    throw err;
  }
  return { coordinator, owned: true, conf };
}
