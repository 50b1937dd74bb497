import { networkInterfaces } from 'node:os';

/** What a lock id says about the process holding a lock. */
export interface HostInfo {
  /** Every IPv4 address of the host, in any order. */
  ipv4: readonly string[];
  /** Process id. */
  pid: number;
  /** A hardware address of the host as 12 lowercase hex digits, or `null` if none is known. */
  mac: string | null;
}

// RFC 1918 ranges, the "intranet" addresses zkutil prefers (pykit's inner_ip_patterns).
const INTRANET = [/^10\./, /^172\.(1[6-9]|2\d|3[01])\./, /^192\.168\./];

/** True for a private (intranet) IPv4 address. */
export function isIntranetIp(ip: string): boolean {
  return INTRANET.some((re) => re.test(ip));
}

/**
 * The address a lock id shows: an intranet IPv4 if the host has one, else a public one, else
 * a loopback one, else `unknownip` (zkutil's placeholder).
 */
export function chooseIp(ipv4: readonly string[]): string {
  const routable = ipv4.filter((ip) => !ip.startsWith('127.'));
  return (
    routable.find(isIntranetIp) ??
    routable[0] ??
    ipv4.find((ip) => ip.startsWith('127.')) ??
    'unknownip'
  );
}

let cached: HostInfo | undefined;

/**
 * Addresses, pid and MAC of this process's host, read once: like zkutil, the recipes assume
 * the host's addresses do not change while the process runs.
 */
export function localHostInfo(): HostInfo {
  if (cached) return cached;
  const ipv4: string[] = [];
  let mac: string | null = null;
  for (const entries of Object.values(networkInterfaces())) {
    for (const address of entries ?? []) {
      if (address.family === 'IPv4') ipv4.push(address.address);
      if (mac === null && !address.internal && address.mac && address.mac !== '00:00:00:00:00:00') {
        mac = address.mac.replaceAll(':', '').toLowerCase();
      }
    }
  }
  cached = { ipv4, pid: process.pid, mac };
  return cached;
}
