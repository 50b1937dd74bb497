import type { LibClient, LibStat, LibWatcher } from './client-lib.js';
import { jute } from './jute-speed.js';
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

const OK = 0;
const NO_NODE = -101;
const GET_DATA = 4;
const EXISTS = 3;

function request(type: number, cls: string, path: string, watch: boolean): unknown {
  const r = jute as unknown as Requests;
  const header = new r.protocol.RequestHeader!();
  header.type = type;
  const payload = new r.protocol[cls]!();
  payload.path = path;
  payload.watch = watch;
  return new r.Request(header, payload);
}

const managerOf = (client: LibClient) => client.connectionManager as unknown as Manager;

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
  cm.queue(request(GET_DATA, 'GetDataRequest', path, watcher !== undefined), (error, reply) => {
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
  cm.queue(request(EXISTS, 'ExistsRequest', path, watcher !== undefined), (error, reply) => {
    if (error && error.getCode() !== NO_NODE) return done(error);
    const existence = reply.header.err === OK;
    if (watcher) {
      if (existence) cm.registerDataWatcher(path, watcher);
      else cm.registerExistenceWatcher(path, watcher);
    }
    done(null, existence ? reply.payload!.stat : null);
  });
}
