import type { LibClient, LibStat, LibWatcher } from './client-lib.js';
import { jute } from './jute-speed.js';
import { ERR, OP } from './protocol.js';
import { batchedRead } from './read-batch.js';

/**
 * getData and exists, sent the way the library's Client sends them but without its wrapper:
 * every Client call runs through `attempt`, a retry loop on async.whilst (a handful of
 * closures, a results map and two argument-array copies per call) that, with the `retries: 0`
 * the adapter configures (it retries itself, see RequestPipeline), makes exactly one attempt;
 * and it re-checks a path the adapter has already checked by the same rules (`validatePath`:
 * non-empty, absolute, no trailing slash, no empty or relative segment). A busy worker reads
 * one entry per task, so that wrapper was a steady share of its CPU and garbage.
 *
 * Same request, same watcher registration, same callback arguments as lib/index.js's
 * Client.prototype.getData and .exists (node-zookeeper-client 1.1.3).
 */

/** The ConnectionManager calls these (lib/ConnectionManager.js). */
interface Manager {
  queue(request: unknown, callback: (error: LibError | null, response: Reply) => void): void;
  registerDataWatcher(path: string, watcher: LibWatcher): void;
  registerExistenceWatcher(path: string, watcher: LibWatcher): void;
}
interface LibError {
  getCode(): number;
}
interface Reply {
  header: { err: number };
  payload: { data?: Buffer; stat: LibStat } | null;
}
interface Requests {
  Request: new (header: unknown, payload: unknown) => unknown;
  protocol: Record<string, new () => Record<string, unknown>>;
}

const OK = ERR.OK;
const NO_NODE = ERR.NO_NODE;
const GET_DATA = OP.GET_DATA;
const EXISTS = OP.EXISTS;

function request(type: number, cls: string, path: string, watch: boolean): unknown {
  const typedJute = jute as unknown as Requests;
  const header = new typedJute.protocol.RequestHeader!();
  header.type = type;
  const payload = new typedJute.protocol[cls]!();
  payload.path = path;
  payload.watch = watch;
  return new typedJute.Request(header, payload);
}

const managerOf = (client: LibClient) => client.connectionManager as unknown as Manager;

/**
 * Where a one-shot data or existence watch must not be set on the server: a path that is the
 * root of a live persistent recursive watch of the same connection (tree-watches.ts). Before
 * 3.9, ZooKeeper keeps one watch mode per path and connection, so a one-shot watch set there
 * turns the recursive watch into a one-shot one and the tree stops reporting. The recursive
 * watch already brings every created, deleted and data change of that node, so the watcher is
 * registered with the library only, which fires it on the first of them as before.
 */
export interface ServerWatchFilter {
  /** Whether a watched read of `path` must leave the server's watch flag unset. */
  coveredByTree(path: string): boolean;
  /** A read that relies on the tree watch is on its way; `readDone` follows its reply. */
  readSent(path: string): void;
  readDone(path: string): void;
}
const filters = new WeakMap<LibClient, ServerWatchFilter>();

/** Installs `filter` for the watched reads of `client` (one per client, kept for its life). */
export function setServerWatchFilter(client: LibClient, filter: ServerWatchFilter): void {
  filters.set(client, filter);
}

/** Whether to set the server's watch flag for a read of `path` with `watcher`; counts the ones that do not. */
function serverWatch(client: LibClient, path: string, watcher: LibWatcher | undefined): boolean {
  if (watcher === undefined) return false;
  const filter = filters.get(client);
  if (filter === undefined || !filter.coveredByTree(path)) return true;
  filter.readSent(path);
  return false;
}

/** After the reply of a read that relied on the tree watch (see serverWatch). */
function relied(client: LibClient, path: string, watcher: LibWatcher | undefined, flag: boolean) {
  if (watcher !== undefined && !flag) filters.get(client)?.readDone(path);
}

/**
 * Client.getData for a path the adapter has checked. A read without a watch joins this
 * turn's batch (read-batch.ts): one multiRead for all of them where the server has it.
 */
export function getData(
  client: LibClient,
  path: string,
  watcher: LibWatcher | undefined,
  done: (error: unknown, data?: Buffer, stat?: LibStat) => void,
): void {
  if (watcher === undefined) {
    batchedRead(client, path, done, getDataAlone);
    return;
  }
  getDataAlone(client, path, watcher, done);
}

/** One getData request on its own (a watched read, or a batch of one). */
function getDataAlone(
  client: LibClient,
  path: string,
  watcher: LibWatcher | undefined,
  done: (error: unknown, data?: Buffer, stat?: LibStat) => void,
): void {
  const cm = managerOf(client);
  const flag = serverWatch(client, path, watcher);
  cm.queue(request(GET_DATA, 'GetDataRequest', path, flag), (error, reply) => {
    relied(client, path, watcher, flag);
    if (error) return done(error);
    if (watcher) cm.registerDataWatcher(path, watcher);
    done(null, reply.payload!.data, reply.payload!.stat);
  });
}

/** Client.exists for a path the adapter has checked: the Stat, or null when there is none. */
export function exists(
  client: LibClient,
  path: string,
  watcher: LibWatcher | undefined,
  done: (error: unknown, stat?: LibStat | null) => void,
): void {
  const cm = managerOf(client);
  const flag = serverWatch(client, path, watcher);
  cm.queue(request(EXISTS, 'ExistsRequest', path, flag), (error, reply) => {
    relied(client, path, watcher, flag);
    if (error && error.getCode() !== NO_NODE) return done(error);
    const existence = reply.header.err === OK;
    if (watcher) {
      if (existence) cm.registerDataWatcher(path, watcher);
      else cm.registerExistenceWatcher(path, watcher);
    }
    done(null, existence ? reply.payload!.stat : null);
  });
}
