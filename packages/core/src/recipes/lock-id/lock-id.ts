import { randomBytes } from 'node:crypto';
import { chooseIp, type HostInfo, localHostInfo } from './host-info.js';

let fallbackNodeId: string | undefined;

/**
 * The node id used when none is configured: the host's MAC address as 12 hex digits, as
 * zkutil's `'%012x' % uuid.getnode()`. Without a MAC, a random 48-bit value that stays the
 * same for the life of the process (what `uuid.getnode()` does too).
 */
export function defaultNodeId(host: HostInfo = localHostInfo()): string {
  if (host.mac) return host.mac;
  fallbackNodeId ??= randomBytes(6).toString('hex');
  return fallbackNodeId;
}

let counter = 0;

/**
 * A lock holder identifier, `<node_id>-<ip>-<pid>-<counter>`, e.g.
 * `web-192.168.0.2-1233-0000000001`. The counter is per process and zero-padded to 10
 * digits, so two locks taken by one process never share an id. The ip is an intranet IPv4
 * when the host has one (see `chooseIp`).
 *
 * @param nodeId identifies the host; defaults to `defaultNodeId()` (what a `ZkConf` without
 *   `nodeId` uses too).
 * @param host where ip and pid come from; defaults to this process (inject it in tests).
 */
export function lockId(nodeId?: string | null, host: HostInfo = localHostInfo()): string {
  const node = nodeId ?? defaultNodeId(host);
  counter += 1;
  return `${node}-${chooseIp(host.ipv4)}-${host.pid}-${String(counter).padStart(10, '0')}`;
}

/** The parts of a lock id; a field that does not parse is `null`. */
export interface ParsedLockId {
  nodeId: string;
  ip: string | null;
  processId: number | null;
  counter: number | null;
  /** The text after `txid:` when the node id has that form (zk transactions), else `null`. */
  txid: string | null;
}

// node ids may themselves contain '-' ("web-01"), so a well-formed id is read from the right,
// anchored on the IPv4 (or zkutil's "unknownip") between node id and pid.
const WELL_FORMED = /^(.*)-(\d{1,3}(?:\.\d{1,3}){3}|unknownip)-(\d+)-([^-]*)$/;

function digits(text: string | undefined): number | null {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : null;
}

/**
 * Splits a lock id made by `lockId` into its parts. Ids that are not well formed are split
 * the way zkutil does (at the first three '-'), and parts that are missing or not numbers
 * where numbers belong come back as `null`.
 */
export function parseLockId(data: string): ParsedLockId {
  const match = WELL_FORMED.exec(data);
  const [nodeId, ip, pid, count] = match
    ? [match[1] as string, match[2], match[3], match[4]]
    : (() => {
        const parts = data.split('-');
        const head = parts.slice(0, 3);
        const rest = parts.length > 3 ? parts.slice(3).join('-') : undefined;
        return [head[0] as string, head[1], head[2], rest];
      })();
  return {
    nodeId,
    ip: ip ?? null,
    processId: digits(pid),
    counter: digits(count),
    txid: nodeId.startsWith('txid:') ? nodeId.slice('txid:'.length) : null,
  };
}
