import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Ports handed out to servers, reserved across the test processes of this machine. A server
 * keeps its port for its whole life, stopped or not (a restart binds the same one), so a port
 * must not go to another server while its first owner is merely stopped: the OS would call it
 * free, and the restart would then find it taken (or, worse, a client would reach the wrong
 * server). A reservation is a file named for the port holding the owner's pid; it goes when
 * that process exits, and one whose process is gone counts as free.
 */
const RESERVED = path.join(os.tmpdir(), 'zoott-zk-testkit-ports');
const mine = new Set<string>();
let hooked = false;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reserves `port` for this process; false when a live process holds it. */
function reserve(port: number): boolean {
  mkdirSync(RESERVED, { recursive: true });
  const file = path.join(RESERVED, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      mine.add(file);
      if (!hooked) {
        hooked = true;
        process.on('exit', () => {
          for (const lockFile of mine) rmSync(lockFile, { force: true });
        });
      }
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (owner === process.pid || (Number.isInteger(owner) && owner > 0 && alive(owner)))
        return false;
      rmSync(file, { force: true }); // its process is gone: a stale reservation
    }
  }
  return false;
}

/** A port the OS calls free right now. */
function unboundPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago and that no other server of a test
 * process holds (see above). Another process may still take it before the server binds it;
 * callers that start servers retry on a bind failure.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unboundPort();
    if (reserve(port)) return port;
  }
}

/** Splits `host:port` (IPv6 in brackets allowed); the port defaults to 2181. */
export function parseHostPort(hostPort: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(hostPort.trim());
  if (!match?.[1]) throw new Error(`not a host:port: ${JSON.stringify(hostPort)}`);
  return { host: match[1], port: match[2] ? Number(match[2]) : 2181 };
}
