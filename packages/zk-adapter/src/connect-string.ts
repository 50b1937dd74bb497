import { ZoottError } from '@zoott/core';
import { validatePath } from '@zoott/core/internal';

export interface ParsedConnectString {
  hosts: Array<{ host: string; port: number }>;
  /** Chroot path (`/app`), or null. */
  chroot: string | null;
}

/**
 * Parses `host1:2181,host2:2181/app` (port defaults to 2181). Throws INVALID_CONFIG naming
 * the bad part, before any connection is attempted.
 */
export function parseConnectString(connectString: string): ParsedConnectString {
  const bad = (why: string) =>
    new ZoottError('INVALID_CONFIG', `connect string ${JSON.stringify(connectString)}: ${why}`, {
      field: 'connectString',
    });
  if (typeof connectString !== 'string' || connectString.trim() === '') {
    throw bad('must be a non-empty string like "127.0.0.1:2181" or "h1:2181,h2:2181/app"');
  }
  const slash = connectString.indexOf('/');
  const hostPart = slash === -1 ? connectString : connectString.slice(0, slash);
  let chroot = slash === -1 ? null : connectString.slice(slash);
  if (chroot === '/') chroot = null;
  if (chroot !== null) {
    try {
      validatePath(chroot);
    } catch (err) {
      throw bad(`bad chroot: ${(err as Error).message}`);
    }
  }
  const hosts = hostPart.split(',').map((item) => {
    const match = /^([^:\s,]+)(?::(\d+))?$/.exec(item.trim());
    if (!match?.[1]) throw bad(`${JSON.stringify(item)} is not host or host:port`);
    const port = match[2] ? Number(match[2]) : 2181;
    if (port < 1 || port > 65535) throw bad(`port ${port} is out of range`);
    return { host: match[1], port };
  });
  return { hosts, chroot };
}
