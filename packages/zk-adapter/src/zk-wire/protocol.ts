import { ErrorCodes } from '@zoott/core/internal';

/*
 * The ZooKeeper wire protocol's numbers that the adapter's changes to node-zookeeper-client
 * use (see README.md beside this file): the one table of them. The library keeps its own
 * copies (lib/jute/index.js OP_CODES and XID_*, lib/ConnectionManager.js STATES,
 * lib/Event.js, lib/Exception.js); the server's are in ZooDefs.OpCode, KeeperException.Code,
 * Watcher.Event.EventType and AddWatchMode. All are fixed by the protocol.
 */

/** Request types (ZooDefs.OpCode). */
export const OP = Object.freeze({
  /** The type of a failed op's slot in a multi's reply (also `notification` in the library). */
  ERROR: -1,
  CREATE: 1,
  DELETE: 2,
  EXISTS: 3,
  GET_DATA: 4,
  SET_DATA: 5,
  PING: 11,
  /** closeSession. */
  CLOSE_SESSION: -11,
  CHECK: 13,
  MULTI: 14,
  REMOVE_WATCHES: 18,
  MULTI_READ: 22,
  AUTH: 100,
  SASL: 102,
  ADD_WATCH: 106,
  WHO_AM_I: 107,
} as const);

/**
 * Error codes (KeeperException.Code) the adapter branches on. Those zoott names take their
 * number from core's registry of error codes (`ErrorCodes[...].zk`), where each is defined
 * once; the rest are the server's codes zoott has no name for.
 */
export const ERR = Object.freeze({
  OK: 0,
  RUNTIME_INCONSISTENCY: zkCode('RUNTIME_INCONSISTENCY'),
  CONNECTION_LOSS: zkCode('CONNECTION_LOSS'),
  MARSHALLING_ERROR: zkCode('MARSHALLING_ERROR'),
  UNIMPLEMENTED: zkCode('UNIMPLEMENTED'),
  NO_NODE: zkCode('NO_NODE'),
  SESSION_EXPIRED: zkCode('SESSION_EXPIRED'),
  AUTH_FAILED: zkCode('AUTH_FAILED'),
  /** NOWATCHER: the server had no such watch (it read a typed watch removal). */
  NO_WATCHER: -121,
  /** The server wants a SASL login before anything else (3.6+ `enforce.auth`). */
  SESSION_CLOSED_REQUIRE_SASL: -124,
  /** QUOTA_EXCEEDED (3.7+): a code the unpatched library throws on in its socket handler. */
  QUOTA_EXCEEDED: -125,
} as const);

function zkCode(code: keyof typeof ErrorCodes): number {
  const zk = ErrorCodes[code].zk;
  if (zk === null) throw new Error(`${code} has no ZooKeeper code`);
  return zk;
}

/** Special request ids (lib/jute XID_*, ClientCnxn). */
export const XID = Object.freeze({
  /** A watch notification. */
  NOTIFICATION: -1,
  PING: -2,
  AUTH: -4,
  SET_WATCHES: -8,
  /** What a closing request of a second connection carries (any positive xid does). */
  CLOSE: 1,
} as const);

/** Watch notification types (Watcher.Event.EventType; lib/Event.js). */
export const EVENT = Object.freeze({
  NODE_CREATED: 1,
  NODE_DELETED: 2,
  NODE_DATA_CHANGED: 3,
  NODE_CHILDREN_CHANGED: 4,
} as const);

/** The library's names of the notification types it knows (lib/Event.js). */
export const EVENT_NAME = Object.freeze({
  [EVENT.NODE_CREATED]: 'created',
  [EVENT.NODE_DELETED]: 'deleted',
  [EVENT.NODE_DATA_CHANGED]: 'dataChanged',
  [EVENT.NODE_CHILDREN_CHANGED]: 'childrenChanged',
} as const);

/** Watch modes of addWatch (AddWatchMode) and watcher types of removeWatches (WatcherType). */
export const WATCH = Object.freeze({
  /** AddWatchMode.PERSISTENT_RECURSIVE. */
  MODE_PERSISTENT_RECURSIVE: 1,
  /** Watcher.WatcherType.PersistentRecursive. */
  TYPE_PERSISTENT_RECURSIVE: 5,
} as const);

/** The library's connection states (lib/ConnectionManager.js STATES). */
export const CM_STATE = Object.freeze({
  DISCONNECTED: 0,
  CONNECTING: 1,
  CONNECTED: 2,
  CONNECTED_READ_ONLY: 3,
  CLOSING: -1,
  CLOSED: -2,
  SESSION_EXPIRED: -3,
  AUTHENTICATION_FAILED: -4,
} as const);
