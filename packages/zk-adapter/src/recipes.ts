// `@zoott/zk-adapter/recipes`: zoott's ZooKeeper recipes with zkutil's call shapes. Core's
// recipes do no I/O: one given a hosts string or a config needs a `connect` factory. These
// are the same recipes bound to this adapter's `connectZk`, so `casLoop('zk1:2181', path)`,
// `initHierarchy(hosts, ...)`, `CachedReader.open(hosts, path)` and a `Lock` given only its
// `conf` connect by themselves, as zkutil's do. Everything else is `@zoott/core/recipes`.

import { ZoottError } from '@zoott/core';
import {
  type CachedReaderOptions,
  type CasLoopOptions,
  type CasRound,
  type ConnectFn,
  type CoordinatorSource,
  CachedReader as CoreCachedReader,
  Lock as CoreLock,
  casLoop as coreCasLoop,
  initHierarchy as coreInitHierarchy,
  type Hierarchy,
  type InitHierarchyOptions,
  isCoordinator,
  type JsonObject,
  type LockOptions,
  type ZkAuth,
  ZkConf,
  type ZkConfInit,
} from '@zoott/core/recipes';
import { connectZk } from './index.js';
import type { ZkOptions } from './options.js';

export * from '@zoott/core/recipes';

/**
 * Opens a session for a config, as the recipes here do when given no Coordinator: a
 * ZooKeeper session on `conf.hosts()` (the recipe then adds `conf.auth()` and closes the
 * session when it is done).
 */
export const connectConf: ConnectFn = (conf) => connectZk(conf.hosts());

/**
 * A `connect` for the recipes that opens each session with these options: TLS to a
 * `secureClientPort`, a SASL login, timeouts. A config (hosts string, dict, `ZkConf`) names
 * where and as whom in ACL terms (`auth`), never how to reach a secured server, so a recipe
 * reaching one is given this as its `connect` (or a Coordinator opened with the options).
 *
 * ```ts
 * const connect = connectWith({ tls: { ca }, sasl: { username, password } });
 * for await (const [n, set] of casLoop<number>(hosts, '/counter', { connect })) set(n + 1);
 * ```
 */
export function connectWith(options: ZkOptions): ConnectFn {
  return (conf) => connectZk(conf.hosts(), options);
}

/**
 * A hosts string or a dict as zkutil reads it: what it leaves out comes from the environment
 * (`ZOOTT_ZK_HOSTS`, `ZOOTT_ZK_AUTH`, ...: zkutil's `config.zk_*`), then the defaults. A
 * `ZkConf` is used as it was built, a Coordinator as it is.
 */
export function zkConfOf(source: ZkConf | ZkConfInit | string): ZkConf {
  // A dict names no connection options: say where they go rather than "unknown field".
  if (typeof source === 'object' && source !== null && !(source instanceof ZkConf))
    for (const key of ['tls', 'sasl'])
      if (key in source)
        throw new ZoottError(
          'INVALID_CONFIG',
          `zkconf: ${JSON.stringify(key)} is a connection option, not a config field: give the recipe connectWith({ ${key} }) as its connect, or a Coordinator opened with it`,
          { field: key },
        );
  return ZkConf.from(source, { env: process.env });
}

function sourceOf(source: CoordinatorSource): CoordinatorSource {
  return isCoordinator(source) ? source : zkConfOf(source);
}

/**
 * zkutil's `cas_loop(zkclient, path)`: core's `casLoop`, where `source` may also be a hosts
 * string, a dict or a `ZkConf` (the loop's own session is closed when it ends).
 *
 * ```ts
 * for await (const [n, set] of casLoop<number>('zk1:2181', '/counter')) set(n + 1);
 * ```
 */
export function casLoop<T = unknown>(
  source: CoordinatorSource,
  path: string,
  options?: CasLoopOptions & { json?: true },
): AsyncGenerator<CasRound<T>, void, undefined>;
export function casLoop(
  source: CoordinatorSource,
  path: string,
  options: CasLoopOptions & { json: false },
): AsyncGenerator<CasRound<Uint8Array, Uint8Array | string>, void, undefined>;
export function casLoop(
  source: CoordinatorSource,
  path: string,
  options: CasLoopOptions = {},
): AsyncGenerator<CasRound<unknown, never>, void, undefined> {
  const bound = { connect: connectConf, ...options } as CasLoopOptions & { json: false };
  return coreCasLoop(sourceOf(source), path, bound) as AsyncGenerator<
    CasRound<unknown, never>,
    void,
    undefined
  >;
}

/**
 * zkutil's `init_hierarchy(hosts, hierarchy, users, auth)`: core's `initHierarchy`, where
 * `source` may also be a hosts string, a dict or a `ZkConf` (its session is closed after).
 */
export function initHierarchy(
  source: CoordinatorSource,
  hierarchy: Hierarchy,
  users: Readonly<Record<string, string>> = {},
  auth: ZkAuth | string | null = null,
  options: InitHierarchyOptions = {},
): Promise<{ created: number; existing: number }> {
  return coreInitHierarchy(sourceOf(source), hierarchy, users, auth, {
    connect: connectConf,
    ...options,
  });
}

/**
 * zkutil's `CachedReader(zk, path, callback)`: `CachedReader.open(source, path, options)` is
 * core's, where `source` may also be a hosts string, a dict or a `ZkConf` (the reader's own
 * session is closed by `close()`). Readers are core's `CachedReader`s.
 */
export const CachedReader = {
  open<T extends JsonObject = JsonObject>(
    source: CoordinatorSource,
    path: string,
    options: CachedReaderOptions<T> = {},
  ): Promise<CoreCachedReader<T>> {
    return CoreCachedReader.open<T>(sourceOf(source), path, { connect: connectConf, ...options });
  },
};
/** A reader `CachedReader.open` made: core's `CachedReader`. */
export type CachedReader<T extends JsonObject = JsonObject> = CoreCachedReader<T>;

/**
 * zkutil's `ZKLock(name, zkconf=..., on_lost=...)`: core's `Lock`, which without a
 * `coordinator` opens its own session from `conf` (a hosts string, a dict or a `ZkConf`; what
 * it leaves out from the environment, as zkutil's `config.zk_*`) and closes it on release.
 */
export class Lock extends CoreLock {
  constructor(name: string | number, options: LockOptions = {}) {
    super(name, { connect: connectConf, ...options, conf: zkConfOf(options.conf ?? {}) });
  }
}
