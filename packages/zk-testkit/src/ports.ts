import net from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. Another process may take it before the
 * server binds it; callers that start servers retry on a bind failure.
 */
export function freePort(): Promise<number> {
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

/** Splits `host:port` (IPv6 in brackets allowed); the port defaults to 2181. */
export function parseHostPort(hostPort: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(hostPort.trim());
  if (!m?.[1]) throw new Error(`not a host:port: ${JSON.stringify(hostPort)}`);
  return { host: m[1], port: m[2] ? Number(m[2]) : 2181 };
}
