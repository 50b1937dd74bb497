import type { EventEmitter } from 'node:events';
import nzcModule from 'node-zookeeper-client';

/**
 * The slice of node-zookeeper-client (patched, see patches/) that the adapter uses, typed here
 * so none of the library's types reach the adapter's public API.
 */
export interface LibException {
  code: number;
  name: string;
}

/** A Stat as decoded: the library's has a Buffer per 64-bit field, the adapter's numbers. */
export interface LibStat {
  czxid: Buffer | number;
  mzxid: Buffer | number;
  ctime: Buffer | number;
  mtime: Buffer | number;
  version: number;
  cversion: number;
  aversion: number;
  ephemeralOwner: Buffer;
  dataLength: number;
  numChildren: number;
  pzxid: Buffer | number;
}

export interface LibId {
  scheme: string;
  id: string;
}

export interface LibAcl {
  permission: number;
  id: LibId;
}

export interface LibEvent {
  type: number;
  name: string;
  path: string;
}

export type LibWatcher = (event: LibEvent) => void;
type Callback<R extends unknown[]> = (error: Error | LibException | null, ...result: R) => void;

export interface LibTransaction {
  create(path: string, data: Buffer | null, acls: LibAcl[], mode: number): LibTransaction;
  check(path: string, version?: number): LibTransaction;
  setData(path: string, data: Buffer | null, version?: number): LibTransaction;
  remove(path: string, version?: number): LibTransaction;
  commit(
    callback: Callback<[Array<{ type: number; path?: string; stat?: LibStat; err?: number }>]>,
  ): void;
}

/** ConnectionManager internals the adapter reads: its state number and socket. */
export interface LibConnectionManager {
  state: number;
  socket?: { destroy(): void };
}

export interface LibClient extends EventEmitter {
  connectionManager: LibConnectionManager;
  connect(): void;
  close(): void;
  getSessionId(): Buffer;
  getSessionPassword(): Buffer;
  getSessionTimeout(): number;
  addAuthInfo(scheme: string, auth: Buffer): void;
  create(
    path: string,
    data: Buffer | null,
    acls: LibAcl[],
    mode: number,
    callback: Callback<[string]>,
  ): void;
  remove(path: string, version: number, callback: Callback<[]>): void;
  setData(path: string, data: Buffer | null, version: number, callback: Callback<[LibStat]>): void;
  getData(
    path: string,
    watcher: LibWatcher | undefined,
    callback: Callback<[Buffer | undefined, LibStat]>,
  ): void;
  setACL(path: string, acls: LibAcl[], version: number, callback: Callback<[LibStat]>): void;
  getACL(path: string, callback: Callback<[LibAcl[], LibStat]>): void;
  exists(path: string, watcher: LibWatcher | undefined, callback: Callback<[LibStat | null]>): void;
  getChildren(
    path: string,
    watcher: LibWatcher | undefined,
    callback: Callback<[string[], LibStat]>,
  ): void;
  transaction(): LibTransaction;
}

export interface LibModule {
  createClient(
    connectString: string,
    options: {
      sessionTimeout: number;
      spinDelay: number;
      retries: number;
      sessionId?: Buffer;
      sessionPassword?: Buffer;
    },
  ): LibClient;
  ACL: new (permission: number, id: LibId) => LibAcl;
  Id: new (scheme: string, id: string) => LibId;
  CreateMode: {
    PERSISTENT: number;
    PERSISTENT_SEQUENTIAL: number;
    EPHEMERAL: number;
    EPHEMERAL_SEQUENTIAL: number;
  };
}

export const lib = nzcModule as unknown as LibModule;

// The protocol's numbers (connection states, event types, op codes) are in zk-wire/protocol.ts.
export { CM_STATE, EVENT_NAME as EVENT_TYPE, OP as OP_CODE } from './protocol.js';
