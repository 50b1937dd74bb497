import net from 'node:net';
import { parseHostPort } from './ports.js';

/** The four-letter commands the testkit uses; zoo.cfg whitelists all of them. */
export type FourLetterCommand = 'ruok' | 'srvr' | 'stat' | 'mntr' | 'cons' | 'srst' | 'wchc';

/**
 * Sends a four-letter command to `host:port` and returns the whole answer (the server closes
 * the connection after answering). Rejects on connection errors and after `timeoutMs`.
 */
export function fourLetter(
  hostPort: string,
  cmd: FourLetterCommand,
  timeoutMs = 2000,
): Promise<string> {
  const { host, port } = parseHostPort(hostPort);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host, port });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy(new Error(`${cmd} to ${hostPort}: no answer within ${timeoutMs} ms`));
    });
    socket.on('connect', () => socket.end(cmd));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', (hadError) => {
      if (!hadError) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** The `Mode:` line of `srvr` (`standalone`, `leader`, `follower`), or `null` while not serving. */
export async function serverMode(hostPort: string): Promise<string | null> {
  try {
    const answer = await fourLetter(hostPort, 'srvr');
    return /^Mode: (\w+)/m.exec(answer)?.[1] ?? null;
  } catch {
    return null;
  }
}
